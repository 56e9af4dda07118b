// Which names a cell declares itself, and where each declaration is visible.
//
// tslab keeps an earlier cell's declarations in a separate declaration file and reaches them at
// run time through `exports.name`. Deciding whether a name used in a cell means one of those
// needs to know whether the cell itself declares that name in a scope around the use. This is a
// parse-only scope analysis (no type checker): every value declaration of the cell (variables,
// parameters, functions, classes, enums, namespaces, imports, catch bindings) is recorded with the
// node whose subtree it is visible in.
//
// When in doubt, a name counts as *not* declared by the cell: callers then rewrite `{ x }` to the
// equivalent `{ x: x }`, which is harmless; the opposite mistake would leave the bug in place.

import * as ts from '@tslab/typescript-for-tslab';

export class CellScopes {
  /** name → the nodes in whose subtree a declaration of that name is visible. */
  private readonly scopesByName = new Map<string, Set<ts.Node>>();

  constructor(private readonly source: ts.SourceFile) {
    const visit = (node: ts.Node): void => {
      this.recordDeclarations(node);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }

  /** Whether `name`, used at `node`, resolves to a declaration made by the cell itself. */
  declaresAround(name: string, node: ts.Node): boolean {
    const scopes = this.scopesByName.get(name);
    if (!scopes) return false;
    for (let n: ts.Node | undefined = node; n; n = n.parent) {
      if (scopes.has(n)) return true;
    }
    return false;
  }

  /** Whether the cell declares `name` at its top level (what tslab carries over to later cells). */
  declaresAtTopLevel(name: string): boolean {
    return this.scopesByName.get(name)?.has(this.source) ?? false;
  }

  private declare(name: string, scope: ts.Node): void {
    let scopes = this.scopesByName.get(name);
    if (!scopes) {
      scopes = new Set();
      this.scopesByName.set(name, scopes);
    }
    scopes.add(scope);
  }

  private declareBinding(binding: ts.BindingName, scope: ts.Node): void {
    if (ts.isIdentifier(binding)) {
      this.declare(binding.text, scope);
      return;
    }
    for (const element of binding.elements) {
      if (ts.isBindingElement(element)) this.declareBinding(element.name, scope);
    }
  }

  private recordDeclarations(node: ts.Node): void {
    if (ts.isVariableDeclaration(node)) {
      const list = node.parent;
      if (ts.isCatchClause(list)) {
        this.declareBinding(node.name, list);
      } else if (ts.isVariableDeclarationList(list)) {
        const blockScoped = (list.flags & ts.NodeFlags.BlockScoped) !== 0;
        this.declareBinding(node.name, blockScoped ? blockScopeOf(list) : varScopeOf(list));
      }
    } else if (ts.isParameter(node)) {
      // Visible in the function's other parameters and its body: the function node itself.
      this.declareBinding(node.name, node.parent);
    } else if (ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node) || ts.isEnumDeclaration(node)) {
      // Cells are modules, so strict: function declarations in blocks are block-scoped.
      if (node.name) this.declare(node.name.text, blockScopeOf(node));
    } else if (ts.isFunctionExpression(node) || ts.isClassExpression(node)) {
      // A named function or class expression sees its own name, nothing outside does.
      if (node.name) this.declare(node.name.text, node);
    } else if (ts.isModuleDeclaration(node)) {
      if (ts.isIdentifier(node.name) && (node.flags & ts.NodeFlags.GlobalAugmentation) === 0 && isInstantiated(node)) {
        this.declare(node.name.text, blockScopeOf(node));
      }
    } else if (ts.isImportClause(node)) {
      if (node.name && !node.isTypeOnly) this.declare(node.name.text, this.source);
    } else if (ts.isNamespaceImport(node)) {
      if (!node.parent.isTypeOnly) this.declare(node.name.text, this.source);
    } else if (ts.isImportSpecifier(node)) {
      if (!node.isTypeOnly && !node.parent.parent.isTypeOnly) this.declare(node.name.text, this.source);
    } else if (ts.isImportEqualsDeclaration(node)) {
      if (!node.isTypeOnly) this.declare(node.name.text, node.parent);
    }
  }
}

/** The node a `let`/`const`/class/function/enum declaration is visible in. */
function blockScopeOf(node: ts.Node): ts.Node {
  for (let n = node.parent; n; n = n.parent) {
    switch (n.kind) {
      case ts.SyntaxKind.Block:
      case ts.SyntaxKind.SourceFile:
      case ts.SyntaxKind.ModuleBlock:
      case ts.SyntaxKind.CaseBlock:
      case ts.SyntaxKind.ForStatement:
      case ts.SyntaxKind.ForInStatement:
      case ts.SyntaxKind.ForOfStatement:
        return n;
    }
  }
  return node.getSourceFile();
}

/**
 * The node a `var` is visible in: the body of the enclosing function (not its parameter list,
 * whose default values cannot see the body's `var`s), a class static block, a namespace body, or
 * the cell.
 */
function varScopeOf(node: ts.Node): ts.Node {
  for (let n = node.parent; n; n = n.parent) {
    if (ts.isBlock(n) && (ts.isFunctionLike(n.parent) || ts.isClassStaticBlockDeclaration(n.parent))) return n;
    if (ts.isSourceFile(n) || ts.isModuleBlock(n)) return n;
  }
  return node.getSourceFile();
}

/** Whether a namespace has a run-time value (declares more than types). */
function isInstantiated(node: ts.ModuleDeclaration): boolean {
  const body = node.body;
  if (!body) return false;
  if (ts.isModuleDeclaration(body)) return isInstantiated(body);
  if (!ts.isModuleBlock(body)) return false;
  return body.statements.some((s) => {
    if (ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s)) return false;
    if (ts.isModuleDeclaration(s)) return isInstantiated(s);
    return true;
  });
}
