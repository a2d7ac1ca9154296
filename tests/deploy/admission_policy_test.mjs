// SPDX-License-Identifier: Apache-2.0
// Evaluates the standalone overlay's ValidatingAdmissionPolicy
// (deploy/overlays/standalone/agent-own-node-policy.yaml, as rendered) with a
// CEL evaluator, against admission requests the API server would build:
// the standalone agent patching its own node and another, with and without
// the node-name claim of a pod-bound token, changing labels, and recording
// Events. render_test.py's `admission` case installs the evaluator and runs
// this; it prints one line per case and exits 1 on any wrong verdict.
//
// What is modelled, as the API server does for a ValidatingAdmissionPolicy:
// matchConstraints (resource and operation), matchConditions (all true or
// the policy does not apply), variables (evaluated in order, visible as
// `variables.NAME`), validations (all true or the request is denied with
// the first failing validation's message). An evaluation error counts as a
// failure, as failurePolicy: Fail makes it. Not modelled: CEL cost limits,
// and the typed schema of request/object (plain JSON here: a field absent
// from a request is absent, as for omitempty fields on the server).
//
//   node admission_policy_test.mjs POLICY_JSON CEL_MODULE_DIR
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

const [policyPath, moduleDir] = process.argv.slice(2)
const {evaluate} = await import(
  pathToFileURL(join(moduleDir, 'node_modules/@marcbachmann/cel-js/lib/index.js')).href)
const policy = JSON.parse(readFileSync(policyPath, 'utf8'))

function evalBool(expression, context) {
  try {
    return evaluate(expression, context) === true
  } catch (e) {
    return false  // failurePolicy: Fail
  }
}

// -> 'not-matched' | 'allowed' | 'denied: MESSAGE'
function admit(request, object, oldObject) {
  const rules = policy.spec.matchConstraints.resourceRules
  const matches = rules.some(r => r.resources.includes(request.resource.resource) &&
                                  r.operations.includes(request.operation) &&
                                  r.apiGroups.includes(request.resource.group))
  if (!matches) return 'not-matched'
  const context = {request, object, oldObject}
  for (const c of policy.spec.matchConditions ?? []) {
    if (!evalBool(c.expression, context)) return 'not-matched'
  }
  const variables = {}
  for (const v of policy.spec.variables ?? []) {
    try {
      variables[v.name] = evaluate(v.expression, {...context, variables})
    } catch (e) {
      return `denied: variable ${v.name}: ${e.message}`
    }
  }
  for (const v of policy.spec.validations) {
    if (!evalBool(v.expression, {...context, variables})) return `denied: ${v.message}`
  }
  return 'allowed'
}

const AGENT = 'system:serviceaccount:faultline:faultline-agent'
const NODE_NAME = 'authentication.kubernetes.io/node-name'

function user(username, node) {
  const u = {username, groups: ['system:serviceaccounts', 'system:authenticated']}
  if (node !== undefined) u.extra = {[NODE_NAME]: node === null ? [] : [node]}
  return u
}
function node(name, {labels = {'kubernetes.io/hostname': name}, taints = []} = {}) {
  const n = {apiVersion: 'v1', kind: 'Node', metadata: {name, resourceVersion: '7'}, spec: {}}
  if (labels !== null) n.metadata.labels = labels
  if (taints.length) n.spec.taints = taints
  return n
}
const TAINT = {key: 'faultline.dev/faulty', value: 'true', effect: 'NoSchedule'}
function patchNode(u, before, after) {
  return admit({operation: 'UPDATE', userInfo: u, name: after.metadata.name,
                resource: {group: '', version: 'v1', resource: 'nodes'}}, after, before)
}
function event(u, kind, name, operation = 'CREATE') {
  const e = {apiVersion: 'v1', kind: 'Event', metadata: {name: `${name}.abc`, namespace: 'default'},
             involvedObject: {kind, name, apiVersion: 'v1'}, reason: 'FaultlineTainted'}
  return admit({operation, userInfo: u, resource: {group: '', version: 'v1', resource: 'events'}},
               e, operation === 'UPDATE' ? e : null)
}

const OWN = 'faultline-agent may patch only the node its pod runs on'
const LABELS = 'faultline-agent may not change node labels'
const EVENTS = 'faultline-agent may record Events only about the node its pod runs on'
const cases = [
  ['the agent taints its own node', patchNode(user(AGENT, 'gpu-1'), node('gpu-1'),
    node('gpu-1', {taints: [TAINT]})), 'allowed'],
  ['the agent lifts its taint and writes its annotation on its own node', patchNode(
    user(AGENT, 'gpu-1'), node('gpu-1', {taints: [TAINT]}), node('gpu-1')), 'allowed'],
  ['the agent taints a node with no labels at all', patchNode(user(AGENT, 'gpu-1'),
    node('gpu-1', {labels: null}), node('gpu-1', {labels: null, taints: [TAINT]})), 'allowed'],
  ['the agent taints another node', patchNode(user(AGENT, 'gpu-1'), node('gpu-2'),
    node('gpu-2', {taints: [TAINT]})), `denied: ${OWN}`],
  ['a token without the node-name claim (not pod-bound, or Kubernetes < 1.30)', patchNode(
    user(AGENT), node('gpu-1'), node('gpu-1', {taints: [TAINT]})), `denied: ${OWN}`],
  ['a node-name claim with no value', patchNode(user(AGENT, null), node('gpu-1'),
    node('gpu-1', {taints: [TAINT]})), `denied: ${OWN}`],
  ['the agent relabels its own node', patchNode(user(AGENT, 'gpu-1'), node('gpu-1'),
    node('gpu-1', {labels: {'kubernetes.io/hostname': 'gpu-1', 'node-role': 'control-plane'}})),
    `denied: ${LABELS}`],
  ['the agent removes every label of its own node', patchNode(user(AGENT, 'gpu-1'),
    node('gpu-1'), node('gpu-1', {labels: null})), `denied: ${LABELS}`],
  ['the agent adds labels to its unlabelled node', patchNode(user(AGENT, 'gpu-1'),
    node('gpu-1', {labels: null}), node('gpu-1', {labels: {a: 'b'}})), `denied: ${LABELS}`],
  ['another agent-like account in another namespace is not this policy\'s business',
    patchNode(user('system:serviceaccount:other:faultline-agent', 'gpu-1'), node('gpu-2'),
      node('gpu-2', {taints: [TAINT]})), 'not-matched'],
  ['the tainter (central, its own RBAC) patches any node', patchNode(
    user('system:serviceaccount:faultline:faultline-tainter'), node('gpu-2'),
    node('gpu-2', {taints: [TAINT]})), 'not-matched'],
  ['the agent records an Event about its node', event(user(AGENT, 'gpu-1'), 'Node', 'gpu-1'),
    'allowed'],
  ['the agent bumps the count of an Event about its node',
    event(user(AGENT, 'gpu-1'), 'Node', 'gpu-1', 'UPDATE'), 'allowed'],
  ['the agent records an Event about another node', event(user(AGENT, 'gpu-1'), 'Node', 'gpu-2'),
    `denied: ${EVENTS}`],
  ['the agent records an Event about a Pod named like its node',
    event(user(AGENT, 'gpu-1'), 'Pod', 'gpu-1'), `denied: ${EVENTS}`],
  ['the agent records an Event without the node-name claim',
    event(user(AGENT), 'Node', 'gpu-1'), `denied: ${EVENTS}`],
  ['a request on another resource (pods) is outside the policy (RBAC refuses it)', admit(
    {operation: 'UPDATE', userInfo: user(AGENT, 'gpu-1'),
     resource: {group: '', version: 'v1', resource: 'pods'}}, {}, {}), 'not-matched'],
]

let failed = 0
for (const [name, got, want] of cases) {
  const ok = got === want
  if (!ok) failed++
  console.log(`${ok ? 'ok' : 'FAIL'}: ${name}: ${got}${ok ? '' : ` (want ${want})`}`)
}
console.log(`admission policy: ${cases.length - failed} of ${cases.length} verdicts right`)
process.exit(failed ? 1 : 0)
