// The strict JSON reader at its edges: each fault with its exact message and character position,
// whitespace (only the four JSON blanks), number literals and where they stop, nesting at exactly
// maxDepth and one past, every escape, surrogates escaped and raw at the boundaries of their ranges,
// duplicate keys with their depth, and the type names used in messages (40 characters, then '…').

import { strict as assert } from 'assert';
import { JsonDuplicateKeyError, JsonNumber, JsonObject, JsonSyntaxError, JsonValue, jsonTypeName, parseStrictJson } from '../../lib/model/strict-json';

function fails(text: string, fault: string, position: number, maxDepth?: number): void {
  assert.throws(
    () => parseStrictJson(text, maxDepth === undefined ? {} : { maxDepth }),
    (e: unknown) => {
      assert.ok(e instanceof JsonSyntaxError, `${JSON.stringify(text)}: ${String(e)}`);
      assert.equal(e.fault, fault, JSON.stringify(text));
      assert.equal(e.position, position, JSON.stringify(text));
      assert.equal(e.message, `${fault} at character ${position}`);
      assert.equal(e.name, 'JsonSyntaxError');
      return true;
    },
  );
}

const str = (text: string) => parseStrictJson(text) as string;
const num = (text: string) => (parseStrictJson(text) as JsonNumber).text;

describe('strict JSON: edges', () => {
  it('JsonNumber.safeInteger: plain integer literals within ±(2^53 − 1) only', () => {
    const cases: [string, number | undefined][] = [
      ['0', 0], ['-0', -0], ['7', 7], ['-12', -12], ['9007199254740991', 9007199254740991], ['-9007199254740991', -9007199254740991],
      ['9007199254740992', undefined], ['1.0', undefined], ['1e2', undefined], ['01', undefined], ['-01', undefined], [' 1', undefined], ['1 ', undefined], ['+1', undefined], ['', undefined],
    ];
    for (const [text, want] of cases) assert.ok(Object.is(new JsonNumber(text).safeInteger(), want), `${JSON.stringify(text)} → ${String(new JsonNumber(text).safeInteger())}`);
    assert.equal(new JsonNumber('2.5e1').value, 25);
  });

  it('JsonObject: members in document order, get, has, keys', () => {
    const o = parseStrictJson('{"b":1,"a":"x","c":null}') as JsonObject;
    assert.ok(o instanceof JsonObject);
    assert.deepEqual(o.keys(), ['b', 'a', 'c']);
    assert.equal(o.get('a'), 'x');
    assert.equal(o.get('c'), null);
    assert.equal(o.get('d'), undefined);
    assert.equal(o.has('c'), true);
    assert.equal(o.has('d'), false);
    assert.equal((o.get('b') as JsonNumber).text, '1');
  });

  it('literals, arrays and objects; blanks are space, tab, LF and CR only', () => {
    assert.deepEqual(parseStrictJson(' \t\r\n[true, false ,null]\r\n\t '), [true, false, null]);
    assert.deepEqual(parseStrictJson('[]'), []);
    assert.deepEqual(parseStrictJson('[ ]'), []);
    assert.deepEqual((parseStrictJson('{ }') as JsonObject).keys(), []);
    const o = parseStrictJson(' { "a" : [ 1 , { } ] , "b" : "" } ') as JsonObject;
    assert.deepEqual(o.keys(), ['a', 'b']);
    assert.equal(((o.get('a') as JsonValue[])[0] as JsonNumber).text, '1');
    assert.equal(o.get('b'), '');
    for (const blank of ['\u00a0', '\v', '\f', '\u2028', '\ufeff']) fails(`${blank}1`, `unexpected character ${JSON.stringify(blank)}`, 0);
    fails('1\u00a0', 'unexpected content after the JSON value', 1);
  });

  it('faults at the top level: empty text, stray characters, broken literals, content after the value', () => {
    fails('', 'unexpected end of JSON', 0);
    fails('   ', 'unexpected end of JSON', 3);
    fails('x', 'unexpected character "x"', 0);
    fails(' }', 'unexpected character "}"', 1);
    fails('tru', 'invalid literal', 0);
    fails('nul', 'invalid literal', 0);
    fails('fals', 'invalid literal', 0);
    fails('True', 'unexpected character "T"', 0);
    fails('true false', 'unexpected content after the JSON value', 5);
    fails('{}x', 'unexpected content after the JSON value', 2);
    fails('nullx', 'unexpected content after the JSON value', 4);
  });

  it('numbers: the literal text kept; a literal stops where JSON\'s grammar does', () => {
    assert.equal(num('0'), '0');
    assert.equal(num('-0'), '-0');
    assert.equal(num('9'), '9');
    assert.equal(num('-12.50'), '-12.50');
    assert.equal(num('1E+2'), '1E+2');
    assert.equal(num('1e-0'), '1e-0');
    assert.equal(num('1e10'), '1e10');
    assert.equal(num('2.5E-12'), '2.5E-12');
    assert.equal(num('123456789012345678901234567890'), '123456789012345678901234567890');
    fails('-', 'invalid number', 0);
    fails('-a', 'invalid number', 0);
    fails('01', 'unexpected content after the JSON value', 1);
    fails('1.', 'unexpected content after the JSON value', 1);
    fails('1e', 'unexpected content after the JSON value', 1);
    fails('1e+', 'unexpected content after the JSON value', 1);
    fails('0x10', 'unexpected content after the JSON value', 1);
    fails('.5', 'unexpected character "."', 0);
    fails('+1', 'unexpected character "+"', 0);
    fails('/', 'unexpected character "/"', 0);
    fails(':', 'unexpected character ":"', 0);
    assert.equal(((parseStrictJson('[-1,2]') as JsonValue[])[1] as JsonNumber).text, '2');
  });

  it('objects and arrays: each structural fault with its position', () => {
    fails('{1:2}', 'expected a string key', 1);
    fails('{"a":1,}', 'expected a string key', 7);
    fails('{"a" 1}', "expected ':' after a key", 5);
    fails('{"a"', "expected ':' after a key", 4);
    fails('{"a":1 "b":2}', "expected ',' or '}' in an object", 7);
    fails('{"a":1', 'unexpected end of JSON inside an object', 6);
    fails('{"a":', 'unexpected end of JSON', 5);
    fails('{', 'expected a string key', 1);
    fails('[1 2]', "expected ',' or ']' in an array", 3);
    fails('[1}', "expected ',' or ']' in an array", 2);
    fails('[1', 'unexpected end of JSON inside an array', 2);
    fails('[1,', 'unexpected end of JSON', 3);
    fails('[1,]', 'unexpected character "]"', 3);
    fails('[', 'unexpected end of JSON', 1);
  });

  it('duplicate keys: the key, the position of its second occurrence and the depth, at every level', () => {
    const dup = (text: string, key: string, position: number, depth: number) =>
      assert.throws(
        () => parseStrictJson(text),
        (e: unknown) => {
          assert.ok(e instanceof JsonDuplicateKeyError);
          assert.ok(e instanceof JsonSyntaxError);
          assert.deepEqual([e.key, e.position, e.depth, e.name, e.message], [key, position, depth, 'JsonDuplicateKeyError', `duplicate key ${JSON.stringify(key)} at character ${position}`]);
          return true;
        },
      );
    dup('{"a":1,"a":2}', 'a', 7, 1);
    dup('{"a":1, "b":2, "a":3}', 'a', 15, 1);
    dup('{"x":{"b":1,"b":2}}', 'b', 12, 2);
    dup('[{"q":1,"q":1}]', 'q', 8, 2);
    dup('{"\\u0061":1,"a":2}', 'a', 12, 1);
  });

  it('nesting: exactly maxDepth levels are read, one more is refused where it opens (default 64)', () => {
    assert.equal(JSON.stringify(parseStrictJson('['.repeat(64) + ']'.repeat(64))).length, 128);
    fails('['.repeat(65) + ']'.repeat(65), 'nesting deeper than 64 levels', 64);
    assert.deepEqual(parseStrictJson('[]', { maxDepth: 1 }), []);
    assert.deepEqual(parseStrictJson('7', { maxDepth: 0 }) instanceof JsonNumber, true);
    fails('[[]]', 'nesting deeper than 1 levels', 1, 1);
    fails('{"a":{}}', 'nesting deeper than 1 levels', 5, 1);
    fails('{"a":[]}', 'nesting deeper than 1 levels', 5, 1);
    fails('[{}]', 'nesting deeper than 1 levels', 1, 1);
    assert.deepEqual((parseStrictJson('{"a":[{}]}', { maxDepth: 3 }) as JsonObject).keys(), ['a']);
    fails('{"a":[{"b":[]}]}', 'nesting deeper than 3 levels', 11, 3);
  });

  it('strings: every escape, runs between them kept', () => {
    assert.equal(str('"\\"\\\\\\/\\b\\f\\n\\r\\t"'), '"\\/\b\f\n\r\t');
    assert.equal(str('"ab\\ncd\\tef"'), 'ab\ncd\tef');
    assert.equal(str('"\\u0041\\u00e9\\uFFFF\\uabcd"'), 'A\u00e9\uffff\uabcd');
    assert.equal(str('"x\\u0041y"'), 'xAy');
    assert.equal(str('""'), '');
    assert.equal(str('" \u007f\u00ff"'), ' \u007f\u00ff');
    fails('"a\\xb"', 'invalid escape in a string', 2);
    fails('"a\\', 'invalid escape in a string', 2);
    fails('"\\u12g4"', 'invalid \\u escape', 1);
    fails('"ab\\u12"', 'invalid \\u escape', 3);
    fails('"\\u-123"', 'invalid \\u escape', 1);
    fails('"abc', 'unterminated string', 0);
    fails('["x", "abc', 'unterminated string', 6);
    fails('"a\u001fb"', 'control character inside a string', 2);
    fails('"\u0000"', 'control character inside a string', 1);
    fails('"ab\nc"', 'control character inside a string', 3);
  });

  it('escaped surrogates: pairs joined, lone ones refused at the escape, the ranges exact', () => {
    assert.equal(str('"\\ud83d\\ude00"'), '\u{1f600}');
    assert.equal(str('"\\uD800\\uDC00"'), '\u{10000}');
    assert.equal(str('"\\udbff\\udfff"'), '\u{10ffff}');
    assert.equal(str('"\\ud7ff\\ue000"'), '\ud7ff\ue000');
    fails('"\\ud800"', 'lone surrogate escape', 1);
    fails('"ab\\udbff"', 'lone surrogate escape', 3);
    fails('"\\ud800x"', 'lone surrogate escape', 1);
    fails('"\\ud800\\n"', 'lone surrogate escape', 1);
    fails('"\\ud800Xudc00"', 'lone surrogate escape', 1);
    fails('"\\ud800\\u0041"', 'lone surrogate escape', 1);
    fails('"\\ud800\\ud800"', 'lone surrogate escape', 1);
    fails('"\\ud800\\ue000"', 'lone surrogate escape', 1);
    fails('"\\ud800\\udbff"', 'lone surrogate escape', 1);
    fails('"\\udc00"', 'lone surrogate escape', 1);
    fails('"x\\udfff"', 'lone surrogate escape', 2);
    fails('"\\ud800\\u00zz"', 'invalid \\u escape', 7);
  });

  it('raw surrogates (from a lenient decoder): pairs kept, lone ones refused at their position', () => {
    assert.equal(str('"\ud83d\ude00"'), '\u{1f600}');
    assert.equal(str('"\udbff\udfff"'), '\u{10ffff}');
    assert.equal(str('"\ud800\udc00z"'), '\u{10000}z');
    assert.equal(str('"\ud7ff\ue000"'), '\ud7ff\ue000');
    fails('"\ud800"', 'lone surrogate inside a string', 1);
    fails('"a\udbff"', 'lone surrogate inside a string', 2);
    fails('"\ud800\ud800"', 'lone surrogate inside a string', 1);
    fails('"\ud800\ue000"', 'lone surrogate inside a string', 1);
    fails('"\ud800\udbff"', 'lone surrogate inside a string', 1);
    fails('"\udc00"', 'lone surrogate inside a string', 1);
    fails('"ab\udfff"', 'lone surrogate inside a string', 3);
    fails('"\udc00\ud800"', 'lone surrogate inside a string', 1);
    fails('"\udc00\udc00"', 'lone surrogate inside a string', 1);
  });

  it('jsonTypeName: every kind, strings and numbers cut after 40 characters', () => {
    assert.equal(jsonTypeName(undefined), 'nothing');
    assert.equal(jsonTypeName(null), 'null');
    assert.equal(jsonTypeName(true), 'boolean true');
    assert.equal(jsonTypeName(false), 'boolean false');
    assert.equal(jsonTypeName('ab"c'), 'string "ab\\"c"');
    assert.equal(jsonTypeName('x'.repeat(40)), `string "${'x'.repeat(40)}"`);
    assert.equal(jsonTypeName('x'.repeat(41)), `string "${'x'.repeat(40)}…"`);
    assert.equal(jsonTypeName(new JsonNumber('-1.5')), 'number -1.5');
    assert.equal(jsonTypeName(new JsonNumber('9'.repeat(40))), `number ${'9'.repeat(40)}`);
    assert.equal(jsonTypeName(new JsonNumber('9'.repeat(41))), `number ${'9'.repeat(40)}…`);
    assert.equal(jsonTypeName([]), 'array of 0');
    assert.equal(jsonTypeName([null, null, null]), 'array of 3');
    assert.equal(jsonTypeName(new JsonObject()), 'object');
  });
});
