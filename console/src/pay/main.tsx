import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { PayApp } from './pay-app.js';
import { readPageSettings, transactionIdOf } from './page-settings.js';
import '../styles.css';
import './pay.css';

const root = document.getElementById('root');
if (!root) throw new Error('The page has no #root element');
createRoot(root).render(
  <StrictMode>
    <PayApp settings={readPageSettings(document)} transactionId={transactionIdOf(window.location.pathname)} />
  </StrictMode>,
);
