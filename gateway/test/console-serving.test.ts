import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import express from 'express';
import { buildConsoleIfStale } from '@payments/testkit';
import { strictContentSecurityPolicy } from '../src/http/console.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './harness.js';

const STRICT =
  "default-src 'none';script-src 'self';style-src 'self';img-src 'self' data:;connect-src 'self';" +
  "font-src 'self';base-uri 'none';form-action 'self';frame-ancestors 'none'";

describe('the console at /console', function () {
  this.timeout(60_000);
  let gw: GatewayUnderTest;

  before(async () => {
    await buildConsoleIfStale();
    gw = await startGatewayUnderTest();
  });
  after(async () => {
    await gw?.stop();
  });

  it('serves the app under the strict policy, never cached, at /console and at every route below it', async () => {
    for (const route of ['/console', '/console/', '/console/users', '/console/reconciliation/cases/x']) {
      const response = await gw.fetch(route);
      expect(response.status, route).to.equal(200);
      expect(response.headers.get('content-type'), route).to.match(/^text\/html/);
      expect(response.headers.get('content-security-policy'), route).to.equal(STRICT);
      expect(response.headers.get('cache-control'), route).to.equal('no-cache');
      const html = await response.text();
      expect(html, route).to.include('<div id="root"></div>');
      // Nothing inline: every script and style is a file of the build.
      expect(html, route).not.to.match(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(html, route).not.to.match(/<style|style=/);
    }
  });

  it('serves the hashed assets for a year, immutable, and a 404 problem for an unknown one', async () => {
    const html = await (await gw.fetch('/console/')).text();
    const assets = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((match) => match[1]);
    expect(assets).to.have.length.greaterThan(1);
    for (const asset of assets) {
      const response = await gw.fetch(asset as string);
      expect(response.status, asset).to.equal(200);
      expect(response.headers.get('cache-control'), asset).to.equal('public, max-age=31536000, immutable');
      expect(response.headers.get('content-security-policy'), asset).to.equal(STRICT);
    }
    const missing = await gw.fetch('/console/assets/index-nothing.js');
    expect(missing.status).to.equal(404);
    expect(missing.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(((await missing.json()) as { code: string }).code).to.equal('RESOURCE_NOT_FOUND');
  });

  it('answers 503 with a problem that says how to build it when the console has not been built', async () => {
    const empty = await mkdtemp(path.join(tmpdir(), 'console-unbuilt-'));
    const unbuilt = await startGatewayUnderTest({}, { consoleDirectory: empty });
    try {
      const response = await unbuilt.fetch('/console/users');
      expect(response.status).to.equal(503);
      expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
      const problem = (await response.json()) as { code: string; detail: string };
      expect(problem.code).to.equal('SERVICE_UNAVAILABLE');
      expect(problem.detail).to.include('console/build.js');
    } finally {
      await unbuilt.stop();
      await rm(empty, { recursive: true, force: true });
    }
  });
});

describe('the helpers another page of the build is served with', () => {
  it('adds sources to the strict policy without dropping its own, and replaces only a none', async () => {
    const app = express();
    app.get(
      '/pay',
      strictContentSecurityPolicy({
        scriptSrc: ['https://js.stripe.com'],
        frameSrc: ['https://js.stripe.com'],
      }),
      (_req, res) => {
        res.send('ok');
      },
    );
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as { port: number };
      const policy = (await fetch(`http://127.0.0.1:${port}/pay`)).headers.get('content-security-policy');
      expect(policy).to.include("script-src 'self' https://js.stripe.com;");
      expect(policy).to.include('frame-src https://js.stripe.com');
      expect(policy).to.include("default-src 'none';");
      expect(policy).to.include("frame-ancestors 'none'");
    } finally {
      server.close();
    }
  });
});
