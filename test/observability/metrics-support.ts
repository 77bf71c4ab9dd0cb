import type { TestApp } from '../support/app.js';

/** One sample of the Prometheus text format: a name, its labels and its value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const found = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!found?.[1] || !found[3]) continue;
    const labels: Record<string, string> = {};
    for (const pair of (found[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      if (pair[1]) labels[pair[1]] = pair[2] ?? '';
    }
    samples.push({ name: found[1], labels, value: Number(found[3]) });
  }
  return samples;
}

/** The value of the sample with exactly these labels, or undefined when the series does not exist. */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}) {
  const wanted = Object.entries(labels);
  return samples.find(
    (sample) =>
      sample.name === name &&
      Object.keys(sample.labels).length === wanted.length &&
      wanted.every(([key, value]) => sample.labels[key] === value),
  )?.value;
}

/** Scrapes `/metrics` of a test app in-process. */
export async function scrape(t: TestApp, headers: Record<string, string> = {}) {
  const response = await t.app.yoga.fetch('http://yoga/metrics', { headers });
  return { status: response.status, headers: response.headers, text: await response.text() };
}
