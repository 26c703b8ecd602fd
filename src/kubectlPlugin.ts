#!/usr/bin/env node
/**
 * The kubectl plugin: kubectl runs an executable named `kubectl-rollout_guard` found on PATH for
 * `kubectl rollout-guard …` (a dash in the command is an underscore in the file name), passing the rest
 * of the command line and the environment (KUBECONFIG) unchanged. It is the same CLI as `rollout-guard`:
 * `kubectl rollout-guard get ds/NAME -n NS`, `kubectl rollout-guard check ds/NAME -n NS`.
 *
 * main.js is imported relative to this file, so the plugin works from any directory and through the
 * symlink `npm install -g` puts on PATH.
 */
import './main.js';
