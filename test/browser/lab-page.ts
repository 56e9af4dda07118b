// Driving a notebook in JupyterLab (and Notebook 7) through playwright-core and Debian's chromium.

import * as fs from 'fs';
import { Browser, Page, chromium } from 'playwright-core';

/** The notebook panel on show (JupyterLab hides the others). */
const CURRENT_PANEL = '.jp-NotebookPanel:not(.lm-mod-hidden)';

export const CHROMIUM = process.env.GDNLAB_CHROMIUM ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Launches headless chromium with a fresh profile (playwright makes a new user-data-dir per launch). */
export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} not found: install Debian's chromium (sudo apt-get install -y chromium) or set GDNLAB_CHROMIUM`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60_000 });
}

/**
 * Closes the browser, waiting at most `ms`. A browser that does not close in time is left to
 * playwright, which kills the browsers it launched when this process exits.
 */
export async function closeBrowser(browser: Browser | undefined, ms = 10_000): Promise<void> {
  if (!browser) return;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<void>((r) => (timer = setTimeout(r, ms)));
  await Promise.race([browser.close().catch(() => undefined), timedOut]);
  clearTimeout(timer);
}

/**
 * Waits until the shown notebook's kernel session is up and idle, answering JupyterLab's kernel
 * dialog with `kernelName` if it asks; fails if the running kernel is not `kernelName`.
 */
export async function waitForNotebookReady(page: Page, kernelName: string, timeoutMs: number): Promise<void> {
  await page.waitForSelector(`${CURRENT_PANEL} .jp-Notebook`, { timeout: timeoutMs });
  const deadline = Date.now() + timeoutMs;
  let idlePolls = 0;
  for (;;) {
    const dialog = page.locator('.jp-Dialog');
    if (await dialog.count()) {
      idlePolls = 0;
      const select = dialog.locator('select');
      if (await select.count()) {
        const values = await select.locator('option').evaluateAll((opts) => opts.map((o) => (o as unknown as { value: string }).value));
        const wanted = values.find((v) => v.includes(`"${kernelName}"`) || v === kernelName);
        if (!wanted) throw new Error(`the kernel dialog does not offer ${kernelName}: ${values.join(', ')}`);
        await select.selectOption(wanted);
      }
      await dialog.locator('button.jp-mod-accept').click();
    }
    const k = await sessionKernel(page);
    if (k.status === 'idle' && k.name !== '') {
      if (k.name !== kernelName) throw new Error(`the notebook runs kernel '${k.name}', expected '${kernelName}'`);
      if (++idlePolls >= 3) return;
    } else {
      idlePolls = 0;
    }
    if (Date.now() > deadline) throw new Error(`the kernel did not become idle: ${JSON.stringify(k)}`);
    await page.waitForTimeout(300);
  }
}

/** The shown notebook's kernel as JupyterLab's session context has it (name '' when none). */
export async function sessionKernel(page: Page): Promise<{ name: string; status: string }> {
  return page.evaluate(`(() => {
    const app = window.jupyterapp;
    const widget = app && app.shell.currentWidget;
    const ctx = widget && widget.sessionContext;
    const kernel = ctx && ctx.session && ctx.session.kernel;
    return kernel ? { name: kernel.name, status: kernel.status } : { name: '', status: ctx ? 'no kernel' : 'no notebook' };
  })()`) as Promise<{ name: string; status: string }>;
}

/** The kernel status JupyterLab shows in the notebook toolbar ('idle', 'busy', ...). */
export async function kernelStatus(page: Page): Promise<string> {
  return (await sessionKernel(page)).status;
}

/** The input prompts of the shown notebook's code cells: "[3]:", "[*]:" (running or queued), "[ ]:". */
export async function codePrompts(page: Page): Promise<string[]> {
  return (await page.locator(`${CURRENT_PANEL} .jp-CodeCell .jp-InputArea-prompt`).allTextContents()).map((t) => t.trim());
}

/**
 * Runs every cell through the Run menu ("Run All Cells") and waits until nothing is running or
 * queued and the kernel is idle. Returns the prompts then: a cell after a failing one stays "[ ]:".
 */
export async function runAllCells(page: Page, timeoutMs: number): Promise<string[]> {
  await page.locator('.lm-MenuBar-itemLabel', { hasText: /^Run$/ }).click();
  await page.locator('.lm-Menu-itemLabel', { hasText: /^Run All Cells$/ }).click();
  const deadline = Date.now() + timeoutMs;
  let quietPolls = 0;
  await page.waitForTimeout(1000);
  for (;;) {
    const prompts = await codePrompts(page);
    const running = prompts.some((p) => p.includes('*'));
    quietPolls = !running && (await kernelStatus(page)) === 'idle' ? quietPolls + 1 : 0;
    if (quietPolls >= 3) return prompts;
    if (Date.now() > deadline) throw new Error(`cells still running after ${timeoutMs} ms: prompts ${prompts.join(' ')}`);
    await page.waitForTimeout(500);
  }
}

/** Saves the notebook (Ctrl+S) and waits until JupyterLab no longer marks it dirty. */
export async function saveNotebook(page: Page): Promise<void> {
  await page.locator('.jp-NotebookPanel .jp-Notebook').first().click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('Control+s');
  await page.waitForFunction(`!document.querySelector('.lm-TabBar-tab.jp-mod-current.jp-mod-dirty')`, undefined, { timeout: 30_000 });
}

/**
 * Scrolls the shown notebook down step by step until `selector` matches (a windowed notebook, as
 * Notebook 7's, renders only the cells near the viewport). Fails after timeoutMs.
 */
export async function scrollUntilShown(page: Page, selector: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await page.locator(selector).count()) > 0) return;
    const atEnd = await page.evaluate(`(() => {
      const scroller = document.querySelector('.jp-WindowedPanel-outer') || document.scrollingElement;
      const before = scroller.scrollTop;
      scroller.scrollTop = before + Math.max(200, scroller.clientHeight * 0.8);
      return scroller.scrollTop === before;
    })()`);
    if (atEnd && (await page.locator(selector).count()) === 0 && Date.now() > deadline) {
      throw new Error(`${selector} did not appear after scrolling the notebook to its end`);
    }
    if (Date.now() > deadline) throw new Error(`${selector} did not appear within ${timeoutMs} ms`);
    await page.waitForTimeout(300);
  }
}

/**
 * Brings the first saved plotly plot to life. JupyterLab's plotly renderer shows the PNG snapshot it
 * saved with the output (img.plot-img) and draws the live plot on the first mouse-over, so: find the
 * plot (scrolling a windowed notebook), check the snapshot or plot is there, hover it, wait for the
 * live SVG. Returns whether a saved snapshot was shown first.
 */
export async function showSavedPlot(page: Page, timeoutMs: number): Promise<{ snapshotShown: boolean }> {
  await scrollUntilShown(page, '.jp-RenderedPlotly', timeoutMs);
  const plot = page.locator('.jp-RenderedPlotly').first();
  await plot.scrollIntoViewIfNeeded();
  if ((await plot.locator('.main-svg').count()) > 0) return { snapshotShown: false };
  const img = plot.locator('img.plot-img');
  const src = (await img.count()) > 0 ? await img.getAttribute('src') : null;
  if (!src || !src.startsWith('data:image/png;base64,')) throw new Error('the saved plot shows neither a live plot nor its saved snapshot');
  await img.hover({ force: true }); // the live plot appears over the snapshot at once, so skip the actionability re-checks
  await plot.locator('.main-svg').first().waitFor({ timeout: timeoutMs }); // the renderer's own node becomes the .js-plotly-plot
  return { snapshotShown: true };
}

export interface PageFindings {
  /** Texts of rendered error outputs and tracebacks. */
  errorTexts: string[];
  /** Texts written to stderr that are not errors (warnings), for the log. */
  stderrTexts: string[];
  plotlyPlots: number;
  plotlySvgs: number;
  tables: number;
  staticImages: number;
  /** Outputs in the notebook model that are figures (plotly JSON or an image) / the tables their HTML holds. */
  figureOutputs: number;
  tableOutputs: number;
  /** Output areas that render a figure (a plotly plot or an image), and PNG images shown. */
  renderedFigures: number;
  pngImages: number;
}

/**
 * What the page shows: error outputs (from the notebook model, which JupyterLab exposes as
 * window.jupyterapp when started with --LabApp.expose_app_in_browser, and from stderr text that
 * reads as an error), drawn plotly plots, HTML tables, static plot images.
 */
export async function inspectOutputs(page: Page): Promise<PageFindings> {
  return page.evaluate(INSPECT_OUTPUTS) as Promise<PageFindings>;
}

// Runs in the page (a string, so that this TypeScript project needs no DOM typings).
const INSPECT_OUTPUTS = `(() => {
  const panel = document.querySelector('${CURRENT_PANEL}') || document;
  const errorTexts = [];
  let figureOutputs = 0, tableOutputs = 0;
  const app = window.jupyterapp;
  const widget = app && app.shell.currentWidget;
  const cells = widget && widget.content && widget.content.model && widget.content.model.cells;
  if (cells) {
    for (let i = 0; i < cells.length; i++) {
      const outputs = cells.get(i).outputs;
      for (let j = 0; outputs && j < outputs.length; j++) {
        const o = outputs.get(j);
        if (o.type === 'error') {
          const e = o.toJSON();
          errorTexts.push('cell ' + i + ': ' + e.ename + ': ' + e.evalue);
        }
        const d = o.toJSON().data || {};
        if (d['application/vnd.plotly.v1+json'] || d['image/png'] || d['image/svg+xml']) figureOutputs++;
        else if (d['text/html']) tableOutputs += ([].concat(d['text/html']).join('').match(/<table[\\s>]/g) || []).length;
      }
    }
  } else {
    errorTexts.push('window.jupyterapp is not available: cannot read the notebook model');
  }
  const stderr = Array.from(panel.querySelectorAll('.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"]'))
    .map((e) => (e.textContent || '').trim());
  const looksLikeError = (t) => /Traceback|\\w*Error: |Uncaught|Exception/.test(t);
  errorTexts.push(...stderr.filter(looksLikeError));
  return {
    errorTexts,
    stderrTexts: stderr.filter((t) => !looksLikeError(t)),
    plotlyPlots: panel.querySelectorAll('.js-plotly-plot').length,
    plotlySvgs: panel.querySelectorAll('.js-plotly-plot .main-svg').length,
    tables: panel.querySelectorAll('.jp-RenderedHTMLCommon table').length,
    staticImages: panel.querySelectorAll('.jp-RenderedSVG, .jp-RenderedImage').length,
    figureOutputs,
    tableOutputs,
    renderedFigures: Array.from(panel.querySelectorAll('.jp-OutputArea-output'))
      .filter((e) => e.matches('.jp-RenderedPlotly, .jp-RenderedImage, .jp-RenderedSVG') || e.querySelector('.jp-RenderedPlotly, .jp-RenderedImage, .jp-RenderedSVG')).length,
    pngImages: panel.querySelectorAll('.jp-OutputArea-output img[src^="data:image/png"]').length,
  };
})()`;
