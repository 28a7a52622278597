/**
 * Workspace packages a published package bundles into its own files (packages/client builds dist/index.js with
 * esbuild and dist/index.d.ts with dts-bundle-generator; cli builds dist/payments.js with esbuild): dependencies
 * inside the workspace, for the build order, but nothing an installer of the tarball needs, and unpublished.
 */
const BUNDLED_FROM = {
  '@payments/client': ['@payments/contracts'],
  '@payments/cli': ['@payments/client', '@payments/contracts'],
};

/** A package.json as `pnpm pack` puts it in the tarball. */
function publishedManifest(pkg) {
  for (const name of BUNDLED_FROM[pkg.name] ?? []) delete pkg.dependencies?.[name];
  if (pkg.dependencies && Object.keys(pkg.dependencies).length === 0) delete pkg.dependencies;
  // `development` points at src/, which no tarball ships: a bundler that sets the condition would find nothing.
  for (const target of Object.values(pkg.exports ?? {})) {
    if (target && typeof target === 'object') delete target.development;
  }
  delete pkg.devDependencies;
  delete pkg.scripts;
  return pkg;
}

module.exports = { hooks: { beforePacking: publishedManifest } };
