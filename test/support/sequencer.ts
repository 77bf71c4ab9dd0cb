import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The projects in the order their files start: those whose files take longest first (each PGlite storage
 * file migrates, starts and stops whole servers; a browser file drives Chromium), the many short API and
 * unit files last. Two workers then end together instead of one running a long file alone at the end.
 * Within a project, Vitest's own order stays: failed and slow files first when it has timings, else
 * larger files first.
 */
const PROJECT_ORDER = ['storage:pglite', 'browser', 'storage:postgres', 'api', 'unit'];

export default class HeaviestProjectsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = PROJECT_ORDER.indexOf(file.project.name);
      return index === -1 ? PROJECT_ORDER.length : index;
    };
    // Array.prototype.sort is stable: Vitest's order within a project is kept.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
