/**
 * Module resolution hook for mutation runs only (tools/mutation/run.mjs registers it).
 *
 * Stryker's sandbox rewrites tsconfig.json with the TypeScript JavaScript API
 * (`import('typescript')` in @stryker-mutator/core's TSConfigPreprocessor: parseConfigFileTextToJson,
 * resolveProjectReferencePath). The project's `typescript` is 7.x, the native compiler, whose
 * package exports only a version stub, so that import would find no API. This hook sends an
 * import of `typescript` made from inside a @stryker-mutator package to the 5.9 JavaScript API
 * installed as `typescript-5.9` (an npm alias). Every other importer, and `npm run typecheck`,
 * keeps the project's typescript.
 */
const STRYKER_PACKAGE = /[\\/]node_modules[\\/]@stryker-mutator[\\/]/;

export async function resolve(specifier, context, nextResolve) {
  if (
    (specifier === 'typescript' || specifier.startsWith('typescript/')) &&
    context.parentURL &&
    STRYKER_PACKAGE.test(decodeURIComponent(context.parentURL))
  ) {
    return nextResolve(`typescript-5.9${specifier.slice('typescript'.length)}`, context);
  }
  return nextResolve(specifier, context);
}
