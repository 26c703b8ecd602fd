// The page: the list of guards (#/) or one guard (#/NAMESPACE/NAME), chosen by the URL's fragment so
// the server serves one file, and the browser's back button moves between them.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { GuardListPage } from './GuardList.js';
import { GuardPage } from './GuardPage.js';
import './styles.css';

/** The guard the fragment names, if any. */
function route(): { namespace: string; name: string } | undefined {
  const m = /^#\/([^/]+)\/([^/]+)$/.exec(window.location.hash);
  return m ? { namespace: decodeURIComponent(m[1]!), name: decodeURIComponent(m[2]!) } : undefined;
}

function App() {
  const [at, setAt] = useState(route());
  useEffect(() => {
    const on = () => setAt(route());
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return (
    <>
      <header class="top">
        <a href="#/" class="brand">
          rollout-guard
        </a>
        <span class="read-only">read-only dashboard</span>
      </header>
      <main>{at ? <GuardPage key={`${at.namespace}/${at.name}`} namespace={at.namespace} name={at.name} /> : <GuardListPage />}</main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
