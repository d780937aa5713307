// The platform packages, by Node's `${process.platform}-${process.arch}`: what bin/pagent
// runs. scripts/release.sh fills the same names (its matrix is the
// list of released platforms).
'use strict';

const PLATFORMS = {
  'linux-x64': 'pagent-linux-x64',
  'linux-arm64': 'pagent-linux-arm64',
  'darwin-arm64': 'pagent-darwin-arm64',
  'darwin-x64': 'pagent-darwin-x64',
  'win32-x64': 'pagent-win32-x64',
};

// The path of this platform's pagent binary, or an error message saying what to do.
function findBinary() {
  const key = `${process.platform}-${process.arch}`;
  const pkg = PLATFORMS[key];
  if (!pkg) {
    return { error: `there is no prebuilt pagent for ${key}; build it from source (see the README: scripts/install.sh)` };
  }
  const exe = process.platform === 'win32' ? 'pagent.exe' : 'pagent';
  try {
    return { path: require.resolve(`${pkg}/bin/${exe}`) };
  } catch (_) {
    return {
      error: `the package ${pkg}, which holds pagent's binary for ${key}, is not installed; ` +
        'npm leaves optional dependencies out with --omit=optional (or --no-optional): install pagent again without it',
    };
  }
}

module.exports = { PLATFORMS, findBinary };
