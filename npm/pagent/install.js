// postinstall: put this platform's pagent binary in place of the Node launcher bin/pagent,
// as esbuild and Claude Code do, so that `pagent` (and `npx pagent`) start the native
// binary directly. A hard link when npm's folders allow it, else a copy; through a
// temporary file and a rename. Not on Windows, where npm's .cmd wrapper runs the file
// with node. Any failure keeps the launcher, which works, only slower: this script never
// fails the install.
'use strict';

const fs = require('fs');
const path = require('path');
const { findBinary } = require('./platforms.js');

function optimize() {
  if (process.platform === 'win32') return;
  const found = findBinary();
  if (found.error) return;
  const target = path.join(__dirname, 'bin', 'pagent');
  const tmp = `${target}.${process.pid}.tmp`;
  try {
    try {
      fs.linkSync(found.path, tmp);
    } catch (_) {
      fs.copyFileSync(found.path, tmp);
    }
    fs.chmodSync(tmp, 0o755);
    fs.renameSync(tmp, target);
  } catch (_) {
    try { fs.unlinkSync(tmp); } catch (_) { /* nothing to clean */ }
  }
}

optimize();
