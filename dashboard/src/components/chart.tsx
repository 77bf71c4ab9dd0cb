import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { formatHourTick } from '../format.js';

interface ChartSeries {
  label: string;
  /** A colour with at least 3:1 against the panel (WCAG 1.4.11 for graphics). */
  color: string;
  /** Dashed, so that two series differ by more than colour. */
  dashed?: boolean;
  values: (number | null)[];
}

const AXIS = {
  stroke: '#3d4455',
  font: '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  grid: { stroke: '#e2e5ec', width: 1 },
  ticks: { stroke: '#c9cdd6', width: 1 },
};

const WHOLE_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 100_000, 1_000_000];

/**
 * A small line chart of hourly values (uPlot on a canvas). The canvas is hidden from assistive technology:
 * the figure's caption says what it shows and `summary` says what it amounts to, in words.
 */
export function Chart({
  id,
  title,
  summary,
  hours,
  series,
  formatValue,
  fixedRange,
  whole = false,
}: {
  id: string;
  title: string;
  summary: string;
  /** Ends of the hours, in seconds since the epoch. */
  hours: number[];
  series: ChartSeries[];
  formatValue(value: number): string;
  /** The y axis' range; default from 0 to a little above the highest value. */
  fixedRange?: [number, number];
  /** Counts: ticks on whole numbers only. */
  whole?: boolean;
}) {
  const target = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const shape = series.map((one) => one.label).join('|');

  // (Re)built when the series change shape; data alone is set on the existing chart below.
  useEffect(() => {
    const element = target.current;
    if (!element) return;
    const chart = new uPlot(
      {
        width: Math.max(200, element.clientWidth),
        height: 140,
        legend: { show: false },
        cursor: { show: false },
        scales: {
          x: { time: true },
          y: {
            range: (_u, min, max) =>
              fixedRange ?? [Math.min(0, min ?? 0), max !== null && max > 0 ? max * 1.15 : 1],
          },
        },
        series: [
          {},
          ...series.map((one) => ({
            label: one.label,
            stroke: one.color,
            width: 2,
            ...(one.dashed ? { dash: [5, 3] } : {}),
            points: { show: true, size: 4, fill: one.color },
            spanGaps: false,
          })),
        ],
        axes: [
          {
            ...AXIS,
            space: 56,
            values: (_u, splits) => splits.map((split) => formatHourTick(new Date(split * 1000))),
          },
          {
            ...AXIS,
            ...(whole ? { incrs: WHOLE_STEPS } : {}),
            // Wide enough for the longest label (at most 8 px a character at 12 px).
            size: (_u, values) =>
              Math.max(44, 18 + 8 * Math.max(0, ...(values ?? []).map((one) => one.length))),
            values: (_u, splits) => splits.map((split) => formatValue(split)),
          },
        ],
      },
      [hours, ...series.map((one) => one.values)],
      element,
    );
    plot.current = chart;
    const resize = new ResizeObserver(() => {
      chart.setSize({ width: Math.max(200, element.clientWidth), height: 140 });
    });
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
      plot.current = null;
    };
  }, [shape]);

  useEffect(() => {
    plot.current?.setData([hours, ...series.map((one) => one.values)]);
  }, [hours, series]);

  return (
    <figure class="chart" data-chart={id}>
      <figcaption>
        <span class="chart-title">{title}</span>
        <span class="legend">
          {series.map((one) => (
            <span key={one.label} class="legend-item">
              <span
                class={one.dashed ? 'swatch dashed' : 'swatch'}
                style={{ borderColor: one.color }}
                aria-hidden="true"
              />
              {one.label}
            </span>
          ))}
        </span>
      </figcaption>
      <div ref={target} class="chart-canvas" aria-hidden="true" />
      <p class="chart-summary" data-field="summary">
        {summary}
      </p>
    </figure>
  );
}
