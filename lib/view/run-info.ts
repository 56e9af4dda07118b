// The first output of every shipped notebook: which backend ran it, on which device, at which
// revision, when. It is one display_data with a table (text/html), a line (text/plain) and the facts
// as JSON (RUN_INFO_MIME), from which `gdnlab notebooks run` copies them into the notebook's
// metadata (metadata.gdnlab.provenance), so a reader of the file and a tool see the same facts.

import * as os from 'os';
import { activeBackend, backendChoice, buildInfo } from '../backend';
import { revision } from '../provenance';
import { display } from './display';
import { htmlTable, textTable } from './format';

export const RUN_INFO_MIME = 'application/vnd.gdnlab.run-info+json';

export interface RunInfo {
  backend: string;
  /** How the backend was chosen (GDN_BACKEND and what auto found). */
  backendChoice: string;
  device: string;
  /** Compute capability on CUDA ("9.0"), "" on the host. */
  sm: string;
  driver: string;
  library: string;
  revision: string;
  date: string;
  host: string;
  node: string;
}

/** The facts of this kernel's run. */
export function runInfo(): RunInfo {
  const b = activeBackend();
  const info = b.info();
  const cuda = (v: number) => (v > 0 ? `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 10)}` : '');
  return {
    backend: b.kind,
    backendChoice: backendChoice(),
    device: info.name,
    sm: info.backend === 'cuda' ? `${info.smMajor}.${info.smMinor}` : '',
    driver: info.backend === 'cuda' ? `${info.driverString || '?'} (CUDA ${cuda(info.driverVersion)}, runtime ${cuda(info.runtimeVersion)})` : '',
    library: buildInfo().build,
    revision: revision(),
    date: new Date().toISOString(),
    host: os.hostname(),
    node: process.version,
  };
}

/** Displays the run's facts as one output (table + line + JSON); returns them. */
export function showRunInfo(): RunInfo {
  const facts = runInfo();
  const rows = Object.entries(facts)
    .filter(([, v]) => v !== '')
    .map(([fact, value]) => ({ fact, value }));
  const title = `This run: ${facts.backend} backend on ${facts.device}, revision ${facts.revision}`;
  display({
    data: {
      'text/html': htmlTable(['fact', 'value'], rows, { caption: title }),
      'text/plain': textTable(['fact', 'value'], rows, { caption: title }),
      [RUN_INFO_MIME]: facts,
    },
    metadata: {},
  });
  return facts;
}
