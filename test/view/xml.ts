// Parses XML strictly (saxes, which danfojs-node's jsdom brings along) and counts elements.

import { SaxesParser } from 'saxes';

export interface XmlFacts {
  root: string;
  rootAttributes: Record<string, string>;
  counts: Record<string, number>;
  texts: string[];
  attributes: Record<string, string>[];
}

/** Throws on any well-formedness error; returns element counts and text contents. */
export function parseXml(xml: string): XmlFacts {
  const parser = new SaxesParser({ xmlns: true });
  const facts: XmlFacts = { root: '', rootAttributes: {}, counts: {}, texts: [], attributes: [] };
  let error: Error | undefined;
  parser.on('error', (e) => {
    error ??= e;
  });
  parser.on('opentag', (tag) => {
    const attrs: Record<string, string> = {};
    for (const [k, v] of Object.entries(tag.attributes)) attrs[k] = typeof v === 'string' ? v : (v as { value: string }).value;
    if (!facts.root) {
      facts.root = tag.local ?? tag.name;
      facts.rootAttributes = attrs;
    }
    const name = tag.local ?? tag.name;
    facts.counts[name] = (facts.counts[name] ?? 0) + 1;
    facts.attributes.push({ ...attrs, '#name': name });
  });
  parser.on('text', (t) => {
    if (t.trim()) facts.texts.push(t);
  });
  parser.write(xml).close();
  if (error) throw error;
  return facts;
}
