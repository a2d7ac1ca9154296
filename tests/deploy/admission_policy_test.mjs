// SPDX-License-Identifier: Apache-2.0
// Evaluates faultline's ValidatingAdmissionPolicies, as rendered, with a CEL
// evaluator against admission requests the API server would build:
//  - faultline-agent-own-node-only (deploy/overlays/standalone): the
//    standalone agent patching its own node and another, with and without
//    the node-name claim of a pod-bound token, changing labels, recording
//    Events;
//  - faultline-tainter-scope (deploy/components/tainter-scope): the tainter
//    changing its own taint and annotation, and anything else on a node.
// render_test.py's `admission` case installs the evaluator and runs this; it
// prints one line per case and exits 1 on any wrong verdict or a missing
// policy.
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
//   node admission_policy_test.mjs POLICIES_JSON CEL_MODULE_DIR
// (POLICIES_JSON: an array of the rendered ValidatingAdmissionPolicy objects)
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

const [policyPath, moduleDir] = process.argv.slice(2)
const {evaluate} = await import(
  pathToFileURL(join(moduleDir, 'node_modules/@marcbachmann/cel-js/lib/index.js')).href)
const policies = JSON.parse(readFileSync(policyPath, 'utf8'))
let policy = null  // the one admit() evaluates

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
const LABELS = 'faultline-agent may not change node labels but faultline.dev/needs-inspection'
const EVENTS = 'faultline-agent may record Events only about the node its pod runs on'
const agentCases = () => [
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
  // Issue 28: the one label faultline writes, a fault that survived reboots.
  ['the agent marks its own node for inspection', patchNode(user(AGENT, 'gpu-1'), node('gpu-1'),
    node('gpu-1', {labels: {'kubernetes.io/hostname': 'gpu-1',
      'faultline.dev/needs-inspection': 'true'}})), 'allowed'],
  ['the agent lifts the inspection label of its own node', patchNode(user(AGENT, 'gpu-1'),
    node('gpu-1', {labels: {'kubernetes.io/hostname': 'gpu-1',
      'faultline.dev/needs-inspection': 'true'}}), node('gpu-1')), 'allowed'],
  ['the agent marks an unlabelled node for inspection and adds another label',
    patchNode(user(AGENT, 'gpu-1'), node('gpu-1', {labels: null}),
      node('gpu-1', {labels: {'faultline.dev/needs-inspection': 'true', a: 'b'}})),
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

const TAINTER = 'system:serviceaccount:faultline:faultline-tainter'
const FOREIGN = {key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule'}
function annotated(n, annotations) { n.metadata.annotations = annotations; return n }
const SCOPE_TAINT = "faultline-tainter may change only faultline's own taint"
const SCOPE_NOEXEC = 'faultline-tainter may not set a NoExecute taint'
const SCOPE_ANN = 'faultline-tainter may change only annotations under faultline.dev/'
const SCOPE_LABELS = 'faultline-tainter may not change node labels but faultline.dev/needs-inspection'
const SCOPE_CORDON = 'faultline-tainter may not cordon or uncordon a node'
const tainterCases = () => {
  const t = user(TAINTER)
  const reasons = {'faultline.dev/reasons': '[{"rule":"nvidia.xid"}]'}
  const cordoned = node('gpu-1', {taints: [FOREIGN]})
  cordoned.spec.unschedulable = true
  return [
    ['the tainter adds its taint and reasons beside a foreign taint', patchNode(t,
      annotated(node('gpu-1', {taints: [FOREIGN]}), {other: 'x'}),
      annotated(node('gpu-1', {taints: [FOREIGN, TAINT]}), {other: 'x', ...reasons})), 'allowed'],
    ['the tainter lifts its taint and removes its annotation', patchNode(t,
      annotated(node('gpu-1', {taints: [TAINT, FOREIGN]}), reasons),
      node('gpu-1', {taints: [FOREIGN]})), 'allowed'],
    ['the tainter uses the drop-in taint key', patchNode(t, node('gpu-1'), node('gpu-1',
      {taints: [{key: 'trainy.konduktor.ai/faulty', value: 'true', effect: 'NoSchedule'}]})),
      'allowed'],
    ['the tainter removes a foreign taint', patchNode(t, node('gpu-1', {taints: [FOREIGN, TAINT]}),
      node('gpu-1', {taints: [TAINT]})), `denied: ${SCOPE_TAINT}`],
    ['the tainter adds a foreign taint', patchNode(t, node('gpu-1'), node('gpu-1',
      {taints: [{key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule'}]})),
      `denied: ${SCOPE_TAINT}`],
    ['the tainter changes the value of a foreign taint', patchNode(t,
      node('gpu-1', {taints: [FOREIGN]}),
      node('gpu-1', {taints: [{...FOREIGN, value: 'absent'}]})), `denied: ${SCOPE_TAINT}`],
    ['the tainter sets its taint with effect NoExecute (evicts every pod)', patchNode(t,
      node('gpu-1'), node('gpu-1', {taints: [{...TAINT, effect: 'NoExecute'}]})),
      `denied: ${SCOPE_NOEXEC}`],
    ['the tainter changes a foreign annotation', patchNode(t, annotated(node('gpu-1'), {a: '1'}),
      annotated(node('gpu-1'), {a: '2'})), `denied: ${SCOPE_ANN}`],
    ['the tainter adds a foreign annotation', patchNode(t, node('gpu-1'),
      annotated(node('gpu-1'), {a: '1'})), `denied: ${SCOPE_ANN}`],
    ['the tainter removes a foreign annotation', patchNode(t, annotated(node('gpu-1'), {a: '1'}),
      node('gpu-1')), `denied: ${SCOPE_ANN}`],
    ['the tainter relabels a node', patchNode(t, node('gpu-1'),
      node('gpu-1', {labels: {'kubernetes.io/hostname': 'gpu-1', x: 'y'}})),
      `denied: ${SCOPE_LABELS}`],
    ['the tainter marks a node for inspection', patchNode(t, node('gpu-1'),
      node('gpu-1', {labels: {'kubernetes.io/hostname': 'gpu-1',
        'faultline.dev/needs-inspection': 'true'}})), 'allowed'],
    ['the tainter lifts the inspection label', patchNode(t,
      node('gpu-1', {labels: {'kubernetes.io/hostname': 'gpu-1',
        'faultline.dev/needs-inspection': 'true'}}), node('gpu-1')), 'allowed'],
    ['the tainter cordons a node', patchNode(t, node('gpu-1', {taints: [FOREIGN]}), cordoned),
      `denied: ${SCOPE_CORDON}`],
    ['another user (an admin) is not this policy\'s business', patchNode(
      user('kubernetes-admin'), node('gpu-1'), node('gpu-1', {labels: null})), 'not-matched'],
  ]
}

const cases = []
for (const [name, make] of [['faultline-agent-own-node-only', agentCases],
                            ['faultline-tainter-scope', tainterCases]]) {
  policy = policies.find(p => p.metadata.name === name)
  if (!policy) {
    cases.push([`policy ${name} is rendered`, 'missing', 'present'])
    continue
  }
  for (const [label, got, want] of make()) cases.push([`${name}: ${label}`, got, want])
}

let failed = 0
for (const [name, got, want] of cases) {
  const ok = got === want
  if (!ok) failed++
  console.log(`${ok ? 'ok' : 'FAIL'}: ${name}: ${got}${ok ? '' : ` (want ${want})`}`)
}
console.log(`admission policy: ${cases.length - failed} of ${cases.length} verdicts right`)
process.exit(failed ? 1 : 0)
