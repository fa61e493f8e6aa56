// Geometry of a sparkline: a few dozen counts (evaluations per day, oldest first) as a line and the area under it,
// in SVG coordinates. Pure: no DOM, no clock. This module imports nothing, so that node's test runner loads it as
// it is; the browser loads it as /ui/sparkgeom.js.

/** Default size, in SVG user units: a table cell's worth. `pad` keeps the line's stroke inside the box. */
export const SPARK_SIZE = { width: 120, height: 28, pad: 2 };

function round(value) {
    return Math.round(value * 100) / 100;
}

/** A count as the sparkline reads it: a finite number of 0 or more, anything else 0. */
function count(value) {
    return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

/**
 * What a sparkline of `values` draws, `{width, height, max, points, line, area, last, peak}`:
 * - `points`: one `{x, y}` per value, evenly spaced from the left edge to the right (one value: in the middle);
 *   0 sits on the bottom edge and the largest value on the top one (all zeros: a flat line on the bottom);
 * - `line`: the path through the points; `area`: the same closed along the bottom edge, for a fill;
 * - `last`: the newest point (today), `peak`: the first point holding the largest value (null when all are 0);
 * - with no values, no points and empty paths.
 * `options` may change the size (SPARK_SIZE's members).
 */
export function sparkline(values, options = {}) {
    const size = { ...SPARK_SIZE, ...options };
    const counts = Array.isArray(values) ? values.map(count) : [];
    const max = counts.reduce((high, value) => Math.max(high, value), 0);
    const left = size.pad;
    const right = size.width - size.pad;
    const top = size.pad;
    const bottom = size.height - size.pad;
    const x = (index) => round(counts.length === 1 ? size.width / 2 : left + (index / (counts.length - 1)) * (right - left));
    const y = (value) => round(max === 0 ? bottom : bottom - (value / max) * (bottom - top));
    const points = counts.map((value, index) => ({ x: x(index), y: y(value) }));
    const line = points.map((point, i) => `${i === 0 ? 'M' : 'L'}${point.x} ${point.y}`).join(' ');
    const area = points.length ? `${line} L${points.at(-1).x} ${bottom} L${points[0].x} ${bottom} Z` : '';
    const peakIndex = max === 0 ? -1 : counts.indexOf(max);
    return {
        width: size.width,
        height: size.height,
        max,
        points,
        line,
        area,
        last: points.length ? points.at(-1) : null,
        peak: peakIndex < 0 ? null : { ...points[peakIndex], index: peakIndex, value: max },
    };
}
