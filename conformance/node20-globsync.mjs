// Lets the @modelcontextprotocol/conformance bundle run on Node 20 (Debian 12's node).
//
// The bundle imports globSync from "fs", which Node has only from 22 on; on Node 20 the import
// is a SyntaxError before anything runs. This rewrites that one import so that globSync comes
// from the npm package `glob` (installed next to the suite by `make conformance`), and leaves
// every other binding of the import where it was. Running it again changes nothing.
//
//   node conformance/node20-globsync.mjs <dir>/node_modules/@modelcontextprotocol/conformance/dist/index.js
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.argv[2];
if (!file) {
  console.error('usage: node node20-globsync.mjs <conformance dist/index.js>');
  process.exit(2);
}
const text = readFileSync(file, 'utf8');
// import{a as b,globSync as X,c as d}from"fs";  (minified, one statement)
const re = /import\{([^{}]*)\}from"(?:node:)?fs";/g;
let changed = 0;
const out = text.replace(re, (stmt, list) => {
  const specs = list.split(',').map((s) => s.trim()).filter(Boolean);
  const glob = specs.filter((s) => /^globSync(\s+as\s+[\w$]+)?$/.test(s));
  if (glob.length === 0) return stmt;
  changed++;
  const rest = specs.filter((s) => !glob.includes(s));
  const head = rest.length ? `import{${rest.join(',')}}from"fs";` : '';
  return `${head}import{${glob.join(',')}}from"glob";`;
});
if (changed === 0) {
  console.log(`node20-globsync: ${file}: no globSync import from fs (already patched)`);
} else {
  writeFileSync(file, out);
  console.log(`node20-globsync: ${file}: globSync now comes from "glob" (${changed} import)`);
}
