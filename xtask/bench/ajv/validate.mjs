// The ajv side of `cargo xtask bench contracts`: validates contract documents against
// mp-contracts' JSON Schemas (draft 2020-12) with ajv, as `mp contract validate` does
// with its schema layer (mp's semantic rules are not checked here).
//
// usage: node validate.mjs [--schemas DIR] PATH
//   PATH is a directory (every *.json under it, recursively, one document per file) or a
//   .jsonl file (one document per line). DIR defaults to crates/mp-contracts/schemas,
//   relative to the working directory.
// Prints "N documents, M invalid" and exits 0 when every document is valid, 1 otherwise,
// 2 on a usage or I/O error. A document that is not JSON, or whose kind has no schema,
// counts as invalid. The first few problems go to stderr.

import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const KINDS = ["IntentContract", "TaskSeed", "Acceptance", "PublishGate", "Evidence"];
const SHOWN = 5;

function usage(message) {
  process.stderr.write(`validate.mjs: ${message}\nusage: node validate.mjs [--schemas DIR] PATH\n`);
  process.exit(2);
}

function fail(message) {
  process.stderr.write(`validate.mjs: ${message}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  let schemas = "crates/mp-contracts/schemas";
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--schemas") {
      if (i + 1 >= argv.length) usage("--schemas needs a directory");
      schemas = argv[++i];
    } else {
      rest.push(argv[i]);
    }
  }
  if (rest.length !== 1) usage("one PATH expected");
  return { schemas, path: rest[0] };
}

function readJson(path) {
  return JSON.parse(readFileSync(path, "utf8"));
}

function validators(dir) {
  // strictTypes off (strict mode otherwise on): the kinds narrow properties that
  // common.schema.json types (an id's pattern without its "type": "string"), which
  // strictTypes reports on every compile.
  const ajv = new Ajv2020({ allErrors: true, strictTypes: false });
  addFormats(ajv);
  // The kinds' schemas refer to it as common.schema.json, resolved against their $id.
  ajv.addSchema(readJson(join(dir, "common.schema.json")));
  const byKind = new Map();
  for (const kind of KINDS) {
    byKind.set(kind, ajv.compile(readJson(join(dir, `${kind}.schema.json`))));
  }
  return byKind;
}

// Every *.json file under dir, in a stable order.
function* jsonFiles(dir) {
  const entries = readdirSync(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      yield* jsonFiles(path);
    } else if (entry.isFile() && entry.name.endsWith(".json")) {
      yield { where: path, text: readFileSync(path, "utf8") };
    }
  }
}

// Every non-empty line of a JSON Lines file.
function* jsonLines(path) {
  const text = readFileSync(path, "utf8");
  let start = 0;
  let line = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    line++;
    const body = text.slice(start, end).trim();
    if (body !== "") yield { where: `${path}:${line}`, text: body };
    start = end + 1;
  }
}

function main() {
  const { schemas, path } = parseArgs(process.argv.slice(2));
  let byKind;
  try {
    byKind = validators(schemas);
  } catch (err) {
    fail(`schemas in ${schemas}: ${err.message}`);
  }
  try {
    const sources = statSync(path).isDirectory() ? jsonFiles(path) : jsonLines(path);
    check(sources, byKind);
  } catch (err) {
    fail(err.message);
  }
}

function check(sources, byKind) {
  let total = 0;
  let invalid = 0;
  const report = (where, problem) => {
    invalid++;
    if (invalid <= SHOWN) process.stderr.write(`${where}: ${problem}\n`);
  };
  for (const { where, text } of sources) {
    total++;
    let doc;
    try {
      doc = JSON.parse(text);
    } catch (err) {
      report(where, `not JSON: ${err.message}`);
      continue;
    }
    const validate = byKind.get(doc?.kind);
    if (validate === undefined) {
      report(where, `no schema for kind ${JSON.stringify(doc?.kind)}`);
    } else if (!validate(doc)) {
      const first = validate.errors[0];
      report(where, `${first.instancePath || "/"} ${first.message} (${validate.errors.length} errors)`);
    }
  }
  process.stdout.write(`${total} documents, ${invalid} invalid\n`);
  process.exitCode = invalid === 0 ? 0 : 1;
}

main();
