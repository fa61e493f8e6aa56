import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SPARK_SIZE, sparkline } from '../../Sources/FlagServer/Dashboard/sparkgeom.js';

// A 100×50 box with a pad of 0: x in steps of 100 / (n - 1), the largest value at y 0, zero at y 50.
const box = { width: 100, height: 50, pad: 0 };

test('values spread from edge to edge, scaled to the largest', () => {
    const geometry = sparkline([0, 5, 10, 5, 0], box);
    assert.deepEqual(geometry.points, [
        { x: 0, y: 50 }, { x: 25, y: 25 }, { x: 50, y: 0 }, { x: 75, y: 25 }, { x: 100, y: 50 },
    ]);
    assert.equal(geometry.line, 'M0 50 L25 25 L50 0 L75 25 L100 50');
    assert.equal(geometry.area, 'M0 50 L25 25 L50 0 L75 25 L100 50 L100 50 L0 50 Z');
    assert.equal(geometry.max, 10);
    assert.deepEqual(geometry.last, { x: 100, y: 50 });
    assert.deepEqual(geometry.peak, { x: 50, y: 0, index: 2, value: 10 });
});

test('the pad keeps the stroke inside the box', () => {
    const geometry = sparkline([1, 3], { width: 120, height: 28, pad: 2 });
    assert.deepEqual(geometry.points, [{ x: 2, y: 18 }, { x: 118, y: 2 }]);
    assert.deepEqual(sparkline([1]).points, [{ x: SPARK_SIZE.width / 2, y: SPARK_SIZE.pad }], 'one value sits in the middle, at the top');
});

test('thirty days of nothing is a flat line on the bottom edge, with no peak', () => {
    const geometry = sparkline(new Array(30).fill(0), box);
    assert.equal(geometry.points.length, 30);
    assert.ok(geometry.points.every((point) => point.y === 50));
    assert.equal(geometry.points[29].x, 100);
    assert.equal(geometry.max, 0);
    assert.equal(geometry.peak, null);
});

test('no values draw nothing; counts that are not counts read as 0', () => {
    const empty = sparkline([], box);
    assert.deepEqual([empty.points, empty.line, empty.area, empty.last, empty.peak], [[], '', '', null, null]);
    assert.deepEqual(sparkline(undefined, box).points, []);
    const odd = sparkline([-3, NaN, '7', null, 4, Infinity], box);
    assert.deepEqual(odd.points.map((point) => point.y), [50, 50, 50, 50, 0, 50]);
    assert.equal(odd.max, 4);
});

test('the first of equal peaks is the peak, and coordinates are rounded to hundredths', () => {
    const geometry = sparkline([3, 7, 7, 1], { width: 10, height: 10, pad: 0 });
    assert.equal(geometry.peak.index, 1);
    assert.deepEqual(geometry.points.map((point) => point.x), [0, 3.33, 6.67, 10]);
    assert.equal(geometry.points[3].y, 8.57);
});
