import './style.css';
import { render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { maySeeConsole } from './abilities.js';
import { GraphQLRequestError, request, type TokenProblem, tokenProblemOf } from './api.js';
import type { Viewer } from './components/header.js';
import { TokenForm } from './components/token-form.js';
import { Dashboard } from './dashboard.js';
import { Viewer as ViewerDocument } from './documents.js';
import { forgetToken, saveToken, takeToken } from './token.js';

/** Who the token is: read before anything else, so a refused token is explained before the page opens. */
function useViewer(token: string | null, onProblem: (problem: TokenProblem) => void) {
  const [viewer, setViewer] = useState<Viewer | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    setViewer(null);
    setProblem(null);
    if (!token) return;
    let active = true;
    request(token, ViewerDocument, {}).then(
      ({ me }) => {
        if (!active) return;
        if (maySeeConsole(me.roles)) {
          setViewer(me);
          return;
        }
        onProblem({
          kind: 'underprivileged',
          message:
            `This token is valid but its roles (${me.roles.join(', ') || 'none'}) may not open the ` +
            'console: it needs a chairman, operator or member token of the tenant.',
        });
      },
      (error: unknown) => {
        if (!active) return;
        if (error instanceof GraphQLRequestError && error.code === 'UNAUTHENTICATED') {
          onProblem(tokenProblemOf(error.message));
        } else {
          setProblem(error instanceof Error ? error.message : String(error));
        }
      },
    );
    return () => {
      active = false;
    };
  }, [token, onProblem]);
  return { viewer, problem };
}

function App() {
  const [token, setToken] = useState<string | null>(takeToken);
  const [tokenProblem, setTokenProblem] = useState<TokenProblem | null>(null);
  const refuse = useCallback((problem: TokenProblem) => {
    forgetToken();
    setTokenProblem(problem);
    setToken(null);
  }, []);
  const onRefused = useCallback((message: string) => refuse(tokenProblemOf(message)), [refuse]);
  const { viewer, problem } = useViewer(token, refuse);

  if (!token) {
    return (
      <TokenForm
        problem={tokenProblem}
        onToken={(next) => {
          saveToken(next);
          setTokenProblem(null);
          setToken(takeToken());
        }}
      />
    );
  }
  if (!viewer) {
    return (
      <main class="token-page">
        <p class={problem ? 'problem' : 'muted'} role={problem ? 'alert' : 'status'}>
          {problem ?? 'Opening the dashboard…'}
        </p>
      </main>
    );
  }
  return (
    <Dashboard
      token={token}
      viewer={viewer}
      onRefused={onRefused}
      onSignOut={() =>
        refuse({ kind: 'signed-out', message: 'Signed out. The token was removed from this tab.' })
      }
    />
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
