import { useEffect, useState } from 'react';
import { onTokenRefused, token, type TokenRefusal } from './api.ts';
import { useRoute } from './hooks.ts';
import { TokenHelpPage } from './views/TokenHelp.tsx';
import { RigStatusView } from './views/RigStatusView.tsx';
import { CampaignSetupView } from './views/CampaignSetupView.tsx';
import { LiveView } from './views/LiveView.tsx';
import { RunsView } from './views/RunsView.tsx';
import { RunPage } from './views/RunPage.tsx';
import { AgreementView } from './views/AgreementView.tsx';
import { CompareView } from './views/CompareView.tsx';
import { KIND_PAGES } from './kind-pages.ts';
import { ConformanceView } from './views/ConformanceView.tsx';
import { SessionView } from './views/SessionView.tsx';
import { DemoView } from './views/DemoView.tsx';

const NAV = [
  ['rig', 'Rig status'],
  ['setup', 'Campaign setup'],
  ['live', 'Live'],
  ['session', 'Live session'],
  ['runs', 'Runs'],
  ['compare', 'Compare'],
  ['conformance', 'Conformance'],
] as const;

export function App() {
  const route = useRoute();
  const [section = 'rig', id, sub, key] = route;
  // without the server's token nothing can start or follow a campaign: say how to get in instead of waiting or failing
  const [refusal, setRefusal] = useState<TokenRefusal | null>(() => (token() === null ? 'token_required' : null));
  useEffect(() => onTokenRefused(setRefusal), []);
  if (refusal) return <TokenHelpPage refusal={refusal} />;
  // demo mode is the whole window (a second screen), without the app's navigation
  if (section === 'demo') return <DemoView />;
  // a kind's page under a run, as its view file declares it (src/ui/kind-pages.ts): an item's page, or the run's
  const itemPage = section === 'runs' && sub && key ? KIND_PAGES.find((page) => page.items === sub) : undefined;
  const runPage = section === 'runs' && sub && !key ? KIND_PAGES.find((page) => page.run === sub) : undefined;
  let view;
  if (section === 'setup') view = <CampaignSetupView />;
  else if (section === 'live') view = <LiveView />;
  else if (section === 'session') view = <SessionView />;
  else if (id && itemPage && key) view = <itemPage.ItemView runId={id} itemKey={key} />;
  else if (id && runPage) view = <runPage.RunView runId={id} />;
  else if (section === 'runs' && id && sub === 'agreement') view = <AgreementView runId={id} />;
  else if (section === 'runs' && id) view = <RunPage runId={id} />;
  else if (section === 'runs') view = <RunsView />;
  else if (section === 'conformance') view = <ConformanceView reportId={id ?? null} />;
  else if (section === 'compare') view = <CompareView a={id ?? null} b={sub ?? null} />;
  else view = <RigStatusView />;
  return (
    <div className="app">
      <header className="topbar">
        <span className="brand">icabench</span>
        <nav>
          {NAV.map(([target, title]) => (
            <a key={target} href={`#/${target}`} className={section === target ? 'active' : ''}>
              {title}
            </a>
          ))}
        </nav>
      </header>
      <main>{view}</main>
    </div>
  );
}
