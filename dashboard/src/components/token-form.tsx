import { useState } from 'preact/hooks';
import type { TokenProblem } from '../api.js';

export function TokenForm({
  problem,
  onToken,
}: {
  problem: TokenProblem | null;
  onToken(token: string): void;
}) {
  const [value, setValue] = useState('');
  return (
    <main class="token-page">
      <form
        class="token"
        onSubmit={(event) => {
          event.preventDefault();
          if (value.trim()) onToken(value);
        }}
      >
        <h1>Boardroom dashboard</h1>
        <p>
          Paste a token of a chairman, an operator or a member of the tenant, or open
          <code> /dashboard#token=&lt;JWT&gt;</code>. It stays in this tab only.
        </p>
        {problem ? (
          <p class={`problem ${problem.kind}`} role="alert" data-token-problem={problem.kind}>
            {problem.message}
          </p>
        ) : null}
        <label class="field block">
          <span>Token</span>
          <textarea
            name="token"
            rows={4}
            autoComplete="off"
            spellcheck={false}
            value={value}
            onInput={(event) => setValue((event.target as HTMLTextAreaElement).value)}
          />
        </label>
        <button type="submit" class="primary token-submit">
          Open dashboard
        </button>
      </form>
    </main>
  );
}
