// Every command of `gdnlab`, in the order `gdnlab --help` lists them. A new command is one file in this folder
// exporting a Command (lib/cli/args.ts: its words, flags, operands and run) and one line here.

import { Command } from './args';
import { infoCommand } from './info';
import { armsCommand } from './arms';
import { checkConvCommand } from './check-conv';
import { checkRaceCommand } from './check-race';
import { checkPostconvCommand } from './check-postconv';
import { checkFusedCommand } from './check-fused';
import { checkSanitizeCommand } from './check-sanitize';
import { benchConvCommand, benchPostconvCommand, benchFusedCommand, benchOverheadCommand, benchHostCommand, benchVerdictCommand } from './bench';
import { notebooksRunCommand, notebooksExportCommand, notebooksCompareCommand } from './notebooks';
import { kernelInstallCommand } from './kernel';
import { profileConvCommand, profilePostconvCommand, profileFusedCommand } from './profile';

export const COMMANDS: readonly Command[] = [
  infoCommand,
  armsCommand,
  checkConvCommand,
  checkRaceCommand,
  checkPostconvCommand,
  checkFusedCommand,
  checkSanitizeCommand,
  benchConvCommand,
  benchPostconvCommand,
  benchFusedCommand,
  benchOverheadCommand,
  benchHostCommand,
  benchVerdictCommand,
  profileConvCommand,
  profilePostconvCommand,
  profileFusedCommand,
  notebooksRunCommand,
  notebooksExportCommand,
  notebooksCompareCommand,
  kernelInstallCommand,
];
