// Two arms that are wrong on purpose (docs/USER-ARMS.md, "Planted defects"), each one line away from a
// correct example in this folder. `gdnlab check conv --mutants --define examples/arms/planted-defects.js`
// (and `check postconv`) must report both caught; a MISSED line means the check has lost its teeth.
const fs = require('fs');
const path = require('path');

const read = (file) => fs.readFileSync(path.join(__dirname, file), 'utf8');
/** Replaces exactly one occurrence, so that an edit of the example cannot silently void the defect. */
function plant(text, from, to, what) {
  if (text.split(from).length !== 2) throw new Error(`planted-defects.js: '${from}' must occur once in ${what}`);
  return text.replace(from, to);
}

module.exports = [
  {
    op: 'conv',
    name: 'reg16-racy',
    description: 'reg16 whose last program writes the final state: the #305 shape',
    source: plant(read('reg16.cuh'), 'if (!s.writes_state) return;', 'if (s.t1 != s.end) return;', 'reg16.cuh'),
    tokensPerProgram: 16,
    mappings: ['exact'],
    plantedDefect: 'the program reaching the end of a sequence writes its state (#305): wrong under another block order',
  },
  {
    op: 'postconv',
    name: 'tile16-seq',
    description: 'tile16 with a sequential fold of the four squares',
    source: plant(read('tile16.cuh'), '(square(x[0]) + square(x[2])) + (square(x[1]) + square(x[3]))', '((square(x[0]) + square(x[1])) + square(x[2])) + square(x[3])', 'tile16.cuh'),
    barriers: true,
    plantedDefect: 'the sum of squares folds x0..x3 in order instead of the tree: other f32 bits, mostly hidden in bf16',
  },
];
