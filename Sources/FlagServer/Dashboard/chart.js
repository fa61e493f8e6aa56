// The rollout chart: percent of units over time as an SVG step line (chartgeom.js computes every coordinate),
// with now marked and a paused stretch drawn as paused. Sizes are SVG attributes: the page's CSP refuses inline
// styles.

import { rolloutChart } from '/ui/chartgeom.js';
import { svg } from '/ui/dom.js';
import { pausedAtMillis, percentAt, scheduleSteps } from '/ui/flagmodel.js';
import { percentText } from '/ui/format.js';
import { formatShortDate, formatUTC } from '/ui/time.js';

/** What chartgeom.js reads from a flag's `rollout`. */
export function chartInput(rollout) {
    return typeof rollout.percent === 'number'
        ? { percent: rollout.percent }
        : { steps: scheduleSteps(rollout), pausedAt: pausedAtMillis(rollout) };
}

/** One sentence for screen readers: what the chart shows. */
export function chartSummary(rollout, now) {
    const current = percentText(percentAt(rollout, now));
    if (typeof rollout.percent === 'number') return `Fixed rollout: ${current} of units.`;
    const steps = scheduleSteps(rollout).map((step) => `${percentText(step.percent)} from ${formatUTC(step.at)}`);
    const paused = pausedAtMillis(rollout) === null ? '' : ` Paused since ${formatUTC(pausedAtMillis(rollout))}.`;
    return `Phased rollout, ${current} now.${paused} Steps: ${steps.join('; ')}.`;
}

/**
 * The `<svg data-testid="rollout-chart">` of a flag-level rollout at `now` (ms), drawn `width` units wide: the
 * screen's width on a phone, so that its labels keep a readable size when the SVG scales to its box. `changes` are
 * the flag's scheduled change requests (`{id, title, applyAt}`), each a dashed line at its time labelled `#id`.
 */
export function rolloutChartElement(rollout, now, width = 640, changes = []) {
    const narrow = width < 480;
    const marks = changes.map((change) => ({ at: Date.parse(change.applyAt), id: change.id, title: change.title }))
        .filter((mark) => Number.isFinite(mark.at));
    const geometry = rolloutChart(chartInput(rollout), now, { width, height: narrow ? 200 : 220, maxTicks: narrow ? 4 : 7, marks });
    const { plot } = geometry;
    const scheduled = geometry.marks.map((mark) => ` Change request #${mark.id} applies ${formatUTC(mark.at)}.`).join('');
    const summary = chartSummary(rollout, now) + scheduled;
    const root = svg('svg', {
        class: 'rollout-chart', testid: 'rollout-chart', viewBox: `0 0 ${geometry.width} ${geometry.height}`,
        role: 'img', 'aria-label': summary, 'data-percent': geometry.now.percent,
        'data-paused': geometry.paused ? 'true' : 'false',
    });
    root.appendChild(svg('title', { text: summary }));
    for (const tick of geometry.yTicks) {
        root.appendChild(svg('line', { class: 'grid', x1: plot.left, x2: plot.right, y1: tick.y, y2: tick.y }));
        root.appendChild(svg('text', { class: 'tick', x: plot.left - 6, y: tick.y + 4, 'text-anchor': 'end', text: `${tick.percent}%` }));
    }
    for (const tick of geometry.xTicks) {
        root.appendChild(svg('line', { class: 'grid', x1: tick.x, x2: tick.x, y1: plot.top, y2: plot.bottom }));
        root.appendChild(svg('text', { class: 'tick', x: tick.x, y: plot.bottom + 18, 'text-anchor': 'middle', text: formatShortDate(tick.t) }));
    }
    root.appendChild(svg('line', { class: 'axis', x1: plot.left, x2: plot.right, y1: plot.bottom, y2: plot.bottom }));
    for (const line of geometry.series) {
        root.appendChild(svg('path', { class: `series series-${line.kind}`, d: line.path, 'data-kind': line.kind }));
    }
    if (geometry.paused) {
        root.appendChild(svg('circle', { class: 'marker-paused', cx: geometry.paused.x, cy: geometry.paused.y, r: 4 }));
        root.appendChild(svg('text', {
            class: 'label-paused', x: geometry.paused.x, y: Math.max(plot.top + 10, geometry.paused.y - 10),
            'text-anchor': 'middle', text: 'paused',
        }));
    }
    for (const mark of geometry.marks) {
        const group = svg('g', { class: 'change-mark', 'data-testid': 'chart-change', 'data-id': String(mark.id) });
        group.appendChild(svg('title', { text: `#${mark.id} ${mark.title}: applies ${formatUTC(mark.at)}` }));
        group.appendChild(svg('line', { class: 'change-line', x1: mark.x, x2: mark.x, y1: plot.top, y2: plot.bottom }));
        group.appendChild(svg('text', { class: 'label-change', x: mark.x, y: plot.bottom - 4, 'text-anchor': 'middle', text: `#${mark.id}` }));
        root.appendChild(group);
    }
    root.appendChild(svg('line', { class: 'now-line', x1: geometry.now.x, x2: geometry.now.x, y1: plot.top, y2: plot.bottom, 'data-testid': 'chart-now' }));
    root.appendChild(svg('circle', { class: 'now-dot', cx: geometry.now.x, cy: geometry.now.y, r: 4 }));
    const labelLeft = geometry.now.x > (plot.left + plot.right) / 2;
    root.appendChild(svg('text', {
        class: 'label-now', x: geometry.now.x + (labelLeft ? -6 : 6), y: plot.top + 10,
        'text-anchor': labelLeft ? 'end' : 'start', text: `now ${percentText(geometry.now.percent)}`,
    }));
    return root;
}
