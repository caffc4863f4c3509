// Parse each file named on the command line with its language's own parser.
// Prints "ok <file>" or "error <file>: <message>" per file; exits 1 if any failed.
import { readFileSync } from "node:fs";
import { parse as babelParse } from "@babel/parser";
import ts from "typescript";
import { parse as parseVue, compileScript, compileTemplate } from "@vue/compiler-sfc";
import { compile as compileSvelte } from "svelte/compiler";
import { parseTemplate } from "@angular/compiler";

function checkTs(file, text, jsx) {
  const kind = jsx ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const diags = sf.parseDiagnostics || [];
  if (diags.length) {
    const d = diags[0];
    const { line } = sf.getLineAndCharacterOfPosition(d.start ?? 0);
    throw new Error(`line ${line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`);
  }
}

function check(file) {
  const text = readFileSync(file, "utf8");
  if (/\.(js|mjs|cjs|jsx)$/.test(file)) {
    babelParse(text, { sourceType: "unambiguous", plugins: ["jsx"], errorRecovery: false });
  } else if (/\.tsx$/.test(file)) {
    checkTs(file, text, true);
  } else if (/\.(ts|mts|cts)$/.test(file)) {
    checkTs(file, text, false);
  } else if (/\.vue$/.test(file)) {
    const { descriptor, errors } = parseVue(text, { filename: file });
    if (errors.length) throw new Error(String(errors[0].message || errors[0]));
    if (descriptor.scriptSetup || descriptor.script) {
      const script = descriptor.scriptSetup || descriptor.script;
      checkTs(file + ".ts", script.content, false);
    }
    if (descriptor.template) {
      const r = compileTemplate({ source: descriptor.template.content, filename: file, id: "x" });
      if (r.errors.length) throw new Error(String(r.errors[0].message || r.errors[0]));
    }
  } else if (/\.svelte$/.test(file)) {
    compileSvelte(text, { filename: file, generate: false });
  } else if (/\.component\.html$/.test(file)) {
    const r = parseTemplate(text, file, { preserveWhitespaces: false });
    if (r.errors && r.errors.length) throw new Error(String(r.errors[0].msg || r.errors[0]));
  } else if (/\.html?$/.test(file)) {
    // plain HTML: inline scripts must parse
    for (const m of text.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)) {
      babelParse(m[1], { sourceType: "unambiguous" });
    }
  } else {
    throw new Error("no parser for this file type");
  }
}

let failed = 0;
for (const file of process.argv.slice(2)) {
  try {
    check(file);
    console.log(`ok ${file}`);
  } catch (e) {
    failed++;
    console.log(`error ${file}: ${String(e.message || e).split("\n")[0]}`);
  }
}
process.exit(failed ? 1 : 0);
