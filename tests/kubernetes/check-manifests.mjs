// Validates Kubernetes manifests: every document against the Kubernetes OpenAPI schema
// (the ajv validators kubernetes-models generates from Kubernetes 1.27's OpenAPI spec),
// then dlenv's own rules for its manifests: no privileged mode, no privilege escalation,
// no host namespaces, every hostPath volume mounted read-only, every container
// with a memory limit.
//   node check-manifests.mjs FILE.yaml...    exit 0: all valid; 1: a problem (listed)
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

const problems = [];
let checked = 0;

function podSpecOf(obj) {
  if (obj.kind === "Pod") return obj.spec;
  if (obj.kind === "CronJob") return obj.spec?.jobTemplate?.spec?.template?.spec;
  return obj.spec?.template?.spec;
}

function dlenvRules(where, obj) {
  const spec = podSpecOf(obj);
  if (!spec) return;
  for (const key of ["hostNetwork", "hostPID", "hostIPC"]) {
    if (spec[key]) problems.push(`${where}: ${key} is set`);
  }
  const hostPaths = new Set((spec.volumes ?? []).filter((v) => v.hostPath).map((v) => v.name));
  const containers = [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
  for (const c of containers) {
    const at = `${where}: container ${c.name}`;
    const sc = c.securityContext ?? {};
    if (sc.privileged !== false) problems.push(`${at}: securityContext.privileged must be false`);
    if (sc.allowPrivilegeEscalation !== false) {
      problems.push(`${at}: securityContext.allowPrivilegeEscalation must be false`);
    }
    if ((sc.capabilities?.add ?? []).length > 0) problems.push(`${at}: adds capabilities`);
    if (!c.resources?.limits?.memory) problems.push(`${at}: no memory limit`);
    for (const m of c.volumeMounts ?? []) {
      if (hostPaths.has(m.name) && m.readOnly !== true) {
        problems.push(`${at}: host path volume ${m.name} is not mounted readOnly`);
      }
    }
  }
}

for (const file of process.argv.slice(2)) {
  const docs = parseAllDocuments(readFileSync(file, "utf8"));
  for (const [i, doc] of docs.entries()) {
    const where = `${file} (document ${i + 1})`;
    if (doc.errors.length > 0) {
      problems.push(`${where}: YAML: ${doc.errors.map((e) => e.message).join("; ")}`);
      continue;
    }
    const obj = doc.toJS();
    if (obj === null) continue;
    const { apiVersion, kind } = obj;
    if (typeof apiVersion !== "string" || typeof kind !== "string") {
      problems.push(`${where}: no apiVersion/kind`);
      continue;
    }
    let Model;
    try {
      Model = (await import(`kubernetes-models/${apiVersion}/${kind}`))[kind];
    } catch {
      problems.push(`${where}: ${apiVersion} ${kind} is not a Kubernetes API type`);
      continue;
    }
    try {
      new Model(obj).validate();
    } catch (e) {
      problems.push(`${where}: ${kind} ${obj.metadata?.name}: ${e.message}`);
    }
    dlenvRules(`${where}: ${kind} ${obj.metadata?.name}`, obj);
    ++checked;
  }
}
for (const p of problems) console.log(p);
console.log(`${checked} manifest(s) checked, ${problems.length} problem(s)`);
process.exit(problems.length === 0 && checked > 0 ? 0 : 1);
