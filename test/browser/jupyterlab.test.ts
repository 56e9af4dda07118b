// In a real browser: JupyterLab from the project venv (with the plotly package's renderer) opens a
// temporary copy of notebooks/00-quickstart.ipynb in headless Debian chromium, runs every cell on the
// gdnlab kernel through the Run menu, and the page must show no error output, drawn plotly plots and
// tables. The plots must survive saving and reopening, and show in the Notebook 7 interface too.
// A screenshot goes to the temp dir; GDNLAB_UPDATE_SCREENSHOTS=1 writes it to
// docs/screenshots/quickstart-jupyterlab.png instead (tests write nothing into the tracked tree unless asked).

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { Browser, Page } from 'playwright-core';
import { projectRoot } from '../../lib/notebooks/paths';
import { PLOTLY_MIME, errorOutputs, readNotebook } from '../../lib/notebooks/ipynb';
import { JupyterServer, startJupyterLab } from './jupyter-server';
import { PageFindings, closeBrowser, inspectOutputs, launchChromium, runAllCells, saveNotebook, showSavedPlot, waitForNotebookReady } from './lab-page';
import { StagedNotebook, stageNotebook } from './staging';

const QUICKSTART = path.join(projectRoot(), 'notebooks', '00-quickstart.ipynb');
const SCREENSHOT = process.env.GDNLAB_UPDATE_SCREENSHOTS === '1'
  ? path.join(projectRoot(), 'docs', 'screenshots', 'quickstart-jupyterlab.png')
  : path.join(os.tmpdir(), 'gdnlab-quickstart-jupyterlab.png');
const KERNEL = 'gdnlab';

function describeFindings(f: PageFindings, pageErrors: string[]): string {
  return JSON.stringify({ ...f, pageErrors }, null, 2);
}

describe('browser: notebooks/00-quickstart.ipynb in JupyterLab (headless chromium)', function () {
  this.timeout(600_000);
  let staged: StagedNotebook | undefined;
  let server: JupyterServer | undefined;
  let browser: Browser | undefined;
  let page: Page;
  const pageErrors: string[] = [];
  /** Set once the notebook ran cleanly: the later tests look at what that run saved. */
  let ranCleanly = false;

  before(async () => {
    assert.ok(fs.existsSync(QUICKSTART), `${QUICKSTART} is missing`);
    staged = stageNotebook(QUICKSTART);
    server = await startJupyterLab(staged.root);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1400, height: 950 } });
    page.on('pageerror', (e) => pageErrors.push(String(e)));
  });

  after(async function () {
    this.timeout(60_000);
    await closeBrowser(browser);
    await server?.stop();
    staged?.cleanup();
  });

  it('runs every cell on the gdnlab kernel: no error outputs, plotly plots drawn, tables shown', async () => {
    if (!server || !staged) throw new Error('set-up failed');
    await page.goto(server.labUrl(staged.relPath), { waitUntil: 'domcontentloaded', timeout: 120_000 });
    await waitForNotebookReady(page, KERNEL, 180_000);
    const prompts = await runAllCells(page, 420_000);
    await page.waitForSelector('.js-plotly-plot .main-svg', { timeout: 30_000 }).catch(() => undefined);
    const f = await inspectOutputs(page);
    const failureShot = path.join(os.tmpdir(), 'gdnlab-quickstart-jupyterlab-failure.png');
    const context = async () => {
      await page.screenshot({ path: failureShot, fullPage: true }).catch(() => undefined);
      return `${describeFindings(f, pageErrors)}\nprompts: ${prompts.join(' ')}\nscreenshot of the failure: ${failureShot}`;
    };
    if (f.errorTexts.length > 0) assert.fail(`error outputs on the page:\n${await context()}`);
    if (!prompts.every((p) => /^\[\d+\]:$/.test(p))) assert.fail(`not every cell ran:\n${await context()}`);
    if (!(f.plotlySvgs > 0 && f.plotlySvgs >= f.plotlyPlots)) assert.fail(`no drawn plotly plot:\n${await context()}\nserver log:\n${server.log()}`);
    if (f.tables === 0) assert.fail(`no table shown:\n${await context()}`);

    fs.mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.locator('.js-plotly-plot').first().scrollIntoViewIfNeeded();
    await page.screenshot({ path: SCREENSHOT });
    assert.ok(fs.statSync(SCREENSHOT).size > 10_000, 'the screenshot is suspiciously small');
    ranCleanly = true;
  });

  it('saves the run: the saved copy ran on gdnlab, has no error outputs, and keeps its plotly outputs', async () => {
    assert.ok(ranCleanly, 'the notebook did not run cleanly in JupyterLab (see the test above)');
    await saveNotebook(page);
    const nb = readNotebook((staged as StagedNotebook).file);
    assert.equal((nb.metadata.kernelspec as { name?: string } | undefined)?.name, KERNEL);
    assert.deepEqual(errorOutputs(nb), []);
    assert.ok(nb.cells.some((c) => (c.outputs ?? []).some((o) => o.data?.[PLOTLY_MIME] !== undefined)), 'no plotly output saved');
  });

  it('shows the saved plots again after reopening, without running anything', async () => {
    if (!server || !staged) throw new Error('set-up failed');
    assert.ok(ranCleanly, 'the notebook did not run cleanly in JupyterLab (see above): nothing saved to reopen');
    await page.goto(server.labUrl(staged.relPath), { waitUntil: 'domcontentloaded', timeout: 120_000 });
    await page.waitForSelector('.jp-NotebookPanel .jp-Notebook', { timeout: 120_000 });
    await page.waitForSelector('.jp-RenderedHTMLCommon table', { timeout: 60_000 });
    await showSavedPlot(page, 60_000);
    const f = await inspectOutputs(page);
    assert.ok(f.plotlySvgs > 0, describeFindings(f, pageErrors));
    assert.ok(f.tables > 0, describeFindings(f, pageErrors));
  });

  it('shows the saved plots and tables in the Notebook 7 interface', async () => {
    if (!server || !staged) throw new Error('set-up failed');
    assert.ok(ranCleanly, 'the notebook did not run cleanly in JupyterLab (see above): nothing saved to show');
    await page.goto(server.notebookUrl(staged.relPath), { waitUntil: 'domcontentloaded', timeout: 120_000 });
    await page.waitForSelector('.jp-Notebook', { timeout: 120_000 });
    await page.waitForSelector('.jp-RenderedHTMLCommon table', { timeout: 60_000 });
    await showSavedPlot(page, 60_000);
  });
});
