// A sparkline of evaluations per day as an SVG (sparkgeom.js computes every coordinate). Sizes are SVG attributes:
// the page's CSP refuses inline styles.

import { svg } from '/ui/dom.js';
import { sparkline } from '/ui/sparkgeom.js';
import { seriesSummary } from '/ui/usage.js';

/**
 * The `<svg data-testid=…>` of a usage row's `series` over `dayKeys` (usage.js), `width` × `height` units, with
 * the sentence a screen reader reads. `data-total` and `data-days` carry the figures for tests.
 */
export function sparklineElement(row, dayKeys, { width = 120, height = 28, testid = 'sparkline' } = {}) {
    const geometry = sparkline(row ? row.series : dayKeys.map(() => 0), { width, height });
    const summary = seriesSummary(row, dayKeys);
    const root = svg('svg', {
        class: 'sparkline', testid, viewBox: `0 0 ${geometry.width} ${geometry.height}`, width: geometry.width,
        height: geometry.height, role: 'img', 'aria-label': summary, 'data-total': row ? row.total : 0,
        'data-days': dayKeys.length,
    });
    root.appendChild(svg('title', { text: summary }));
    if (geometry.area) root.appendChild(svg('path', { class: 'spark-area', d: geometry.area }));
    if (geometry.line) root.appendChild(svg('path', { class: 'spark-line', d: geometry.line }));
    if (geometry.last) root.appendChild(svg('circle', { class: 'spark-last', cx: geometry.last.x, cy: geometry.last.y, r: 2 }));
    return root;
}
