/**
 * Told once a change to model versions (registered, promoted, rolled back) committed on this instance, before
 * the change is answered: whatever holds model versions (the response cache, src/infra/model-cache-invalidation.ts)
 * drops them. Changes made on other instances arrive as MODEL_VERSION_CHANGED events.
 */
export type ModelVersionsChanged = () => Promise<void>;
