// The dashboard's modules import their neighbours as the page serves them (`/ui/format.js`): this resolves `/ui/` to
// the dashboard's directory, for the test process only, so that the real modules are tested rather than copies.
import { register } from 'node:module';

const dashboard = new URL('../../Sources/FlagServer/Dashboard/', import.meta.url).href;
register(`data:text/javascript,${encodeURIComponent(`
    export async function resolve(specifier, context, next) {
        if (specifier.startsWith('/ui/')) return next(${JSON.stringify(dashboard)} + specifier.slice(4), context);
        return next(specifier, context);
    }`)}`);

/** The dashboard's module `name` (e.g. `api.js`), with its `/ui/` imports resolved. */
export function dashboardModule(name) {
    return import(`${dashboard}${name}`);
}
