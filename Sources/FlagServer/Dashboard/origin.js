// Whether the page travels in clear text over a network. Pure.

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * True when the dashboard is served over plain `http:` from a host other than this machine: tokens then cross
 * the network readable by anyone on the path, and the page warns (put TLS in front of flagserver).
 */
export function isPlainHTTPRemote(protocol, hostname) {
    return protocol === 'http:' && !LOOPBACK.has(String(hostname).toLowerCase());
}
