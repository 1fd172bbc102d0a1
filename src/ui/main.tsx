import { createRoot } from 'react-dom/client';
import { adoptTokenFromLocation } from './api.ts';
import { App } from './App.tsx';

adoptTokenFromLocation();
createRoot(document.getElementById('root')!).render(<App />);
