import type { DashboardModelVersionFragment } from '../../../src/generated/dashboard/graphql.js';
import { formatDateTime } from '../format.js';

export function Models({ models }: { models: DashboardModelVersionFragment[] }) {
  return (
    <section class="panel models" aria-labelledby="models-heading">
      <h2 id="models-heading">Production models</h2>
      {models.length === 0 ? (
        <p class="muted">No base model in production.</p>
      ) : (
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Base model</th>
                <th scope="col">Version</th>
                <th scope="col">Provider</th>
                <th scope="col">Since</th>
              </tr>
            </thead>
            <tbody>
              {models.map((model) => (
                <tr key={model.id} data-base-model={model.baseModel}>
                  <th scope="row">{model.baseModel}</th>
                  <td data-field="version_number" data-value={String(model.versionNumber)}>
                    v{model.versionNumber}
                  </td>
                  <td>{model.provider}</td>
                  <td>
                    <time dateTime={model.updatedAt}>{formatDateTime(model.updatedAt)}</time>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
