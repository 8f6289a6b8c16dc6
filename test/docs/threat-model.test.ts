import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

const root = new URL('../../', import.meta.url);

test('every test the threat model cites exists, and every quoted test name is in its file', () => {
  const page = readFileSync(new URL('docs/threat-model.md', root), 'utf8');
  const cited = [...page.matchAll(/`(test\/[^`]+\.test\.ts)`(?: \("([^"]+)"\))?/g)];
  assert.ok(cited.length >= 15, `${cited.length} tests cited`);
  for (const [, path, name] of cited) {
    assert.ok(existsSync(new URL(path!, root)), `${path} exists`);
    if (name) {
      const prefix = name.replace(/…$/, '');
      assert.ok(
        readFileSync(new URL(path!, root), 'utf8').includes(prefix),
        `${path} has a test "${prefix}"`,
      );
    }
  }
});
