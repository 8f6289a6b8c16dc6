import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { accessSync, constants, realpathSync } from 'node:fs';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { test } from 'node:test';

const ROOT = join(import.meta.dirname, '..', '..');

/** A `node` on PATH other than the project's pinned one (the system's), or undefined. */
function otherNode(): string | undefined {
  const pinned = realpathSync(process.execPath);
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'node');
    try {
      accessSync(candidate, constants.X_OK);
      if (realpathSync(candidate) !== pinned) return candidate;
    } catch {
      // Not there.
    }
  }
  return undefined;
}

test('the installed `transfer-router-admin` runs on the pinned Node.js even when the shell finds another `node` first', async (t) => {
  const system = otherNode();
  if (!system) return t.skip('no Node.js other than the pinned one on PATH');
  const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
    bin: Record<string, string>;
  };
  // Installed as npm installs a binary: a link in a directory on PATH, called from anywhere.
  const home = await mkdtemp(join(tmpdir(), 'tr-admin-bin-'));
  try {
    await symlink(join(ROOT, manifest.bin['transfer-router-admin']!), join(home, 'transfer-router-admin'));
    const shell = (command: string) =>
      spawnSync('/bin/sh', ['-c', command], {
        cwd: home,
        encoding: 'utf8',
        env: { PATH: [join(system, '..'), home, '/usr/bin', '/bin'].join(delimiter), HOME: home },
      });
    const found = shell('node --version').stdout.trim();
    assert.notEqual(found, process.version, 'the shell finds another Node.js first');

    const help = shell('transfer-router-admin --help');
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^Transfer Router admin CLI\n\nUsage: transfer-router-admin <command>/);

    // Its exit status and messages are the CLI's own.
    const usage = shell('transfer-router-admin keys create');
    assert.equal(usage.status, 2);
    assert.match(usage.stderr, /^error: missing <integrationId>/);
  } finally {
    await rm(home, { recursive: true, force: true });
  }
});
