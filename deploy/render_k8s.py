"""Render deploy/k8s the way `kustomize build` would, for offline validation in CI.

    python deploy/render_k8s.py [deploy/k8s] [-o rendered.yaml]

Only a kustomization with plain `resources:` that name files in its own directory is
supported: for that, kustomize's output is the listed documents, concatenated. Anything else
(patches, generators, images, namespace, remote bases) is refused rather than approximated,
so what CI validates is what `kubectl apply -k` applies.

Besides rendering, it checks what schema validation cannot: no two objects of one kind share a
name, every YAML file in the directory is listed, and the Service, PodDisruptionBudget,
NetworkPolicy and HorizontalPodAutoscaler point at the Deployment and its pod labels, and the
ConfigMap and Secret that the Deployment reads exist.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

SUPPORTED_KEYS = {"apiVersion", "kind", "resources"}


class RenderError(Exception):
    pass


def load_resources(kdir: Path) -> list[dict]:
    kfile = kdir / "kustomization.yaml"
    kust = yaml.safe_load(kfile.read_text())
    if not isinstance(kust, dict) or kust.get("kind") != "Kustomization":
        raise RenderError(f"{kfile}: not a Kustomization")
    extra = set(kust) - SUPPORTED_KEYS
    if extra:
        raise RenderError(
            f"{kfile}: unsupported fields {sorted(extra)}: only plain `resources:` can be "
            "rendered without kustomize; put them in an overlay"
        )
    listed = kust.get("resources") or []
    docs: list[dict] = []
    for entry in listed:
        path = (kdir / entry).resolve()
        if not path.is_file() or path.parent != kdir.resolve():
            raise RenderError(f"{kfile}: resource {entry!r} is not a file in {kdir}")
        for doc in yaml.safe_load_all(path.read_text()):
            if doc is None:
                continue
            if not isinstance(doc, dict) or "kind" not in doc or "apiVersion" not in doc:
                raise RenderError(f"{path}: a document without apiVersion/kind")
            docs.append(doc)
    unlisted = sorted(
        p.name
        for p in kdir.iterdir()
        if p.suffix in (".yaml", ".yml") and p.name != "kustomization.yaml" and p.name not in listed
    )
    if unlisted:
        raise RenderError(f"{kfile}: files not listed in resources: {unlisted}")
    return docs


def check_consistency(docs: list[dict]) -> list[str]:
    problems: list[str] = []
    by_kind: dict[str, dict[str, dict]] = {}
    for doc in docs:
        name = (doc.get("metadata") or {}).get("name")
        if not name:
            problems.append(f"{doc['kind']} without metadata.name")
            continue
        if name in by_kind.setdefault(doc["kind"], {}):
            problems.append(f"duplicate {doc['kind']}/{name}")
        by_kind[doc["kind"]][name] = doc

    deployments = by_kind.get("Deployment", {})
    pod_labels = {
        name: d["spec"]["template"]["metadata"].get("labels", {}) for name, d in deployments.items()
    }

    def selects_some_pods(selector: dict, what: str) -> None:
        if not any(all(labels.get(k) == v for k, v in selector.items())
                   for labels in pod_labels.values()):
            problems.append(f"{what}: selector {selector} matches no Deployment's pods")

    for name, d in deployments.items():
        selects_some_pods(d["spec"]["selector"]["matchLabels"], f"Deployment/{name}")
        for c in d["spec"]["template"]["spec"]["containers"]:
            for src in c.get("envFrom", []):
                ref = src.get("configMapRef") or src.get("secretRef") or {}
                kind = "ConfigMap" if "configMapRef" in src else "Secret"
                if ref.get("name") not in by_kind.get(kind, {}):
                    problems.append(f"Deployment/{name}: envFrom {kind} {ref.get('name')} missing")
            for env in c.get("env", []):
                ref = (env.get("valueFrom") or {}).get("secretKeyRef")
                if ref:
                    secret = by_kind.get("Secret", {}).get(ref["name"]) or {}
                    data = {**secret.get("data", {}), **secret.get("stringData", {})}
                    if ref["key"] not in data:
                        problems.append(
                            f"Deployment/{name}: Secret {ref['name']} has no key {ref['key']}"
                        )
    for name, s in by_kind.get("Service", {}).items():
        selects_some_pods(s["spec"].get("selector", {}), f"Service/{name}")
    for name, p in by_kind.get("PodDisruptionBudget", {}).items():
        selects_some_pods(p["spec"]["selector"]["matchLabels"], f"PodDisruptionBudget/{name}")
    for name, n in by_kind.get("NetworkPolicy", {}).items():
        selects_some_pods(n["spec"]["podSelector"].get("matchLabels", {}), f"NetworkPolicy/{name}")
    for name, h in by_kind.get("HorizontalPodAutoscaler", {}).items():
        ref = h["spec"]["scaleTargetRef"]
        if ref["kind"] != "Deployment" or ref["name"] not in deployments:
            problems.append(f"HorizontalPodAutoscaler/{name}: target {ref} not found")
    return problems


def render(docs: list[dict]) -> str:
    return "".join(
        "---\n" + yaml.safe_dump(doc, sort_keys=False, default_flow_style=False) for doc in docs
    )


def main(argv: list[str] | None = None) -> int:
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", type=Path, default=here / "k8s")
    parser.add_argument("-o", "--output", type=Path, help="write here instead of stdout")
    args = parser.parse_args(argv)
    try:
        docs = load_resources(args.dir)
    except (RenderError, OSError, yaml.YAMLError) as exc:
        print(f"render_k8s: {exc}", file=sys.stderr)
        return 1
    problems = check_consistency(docs)
    for problem in problems:
        print(f"render_k8s: {problem}", file=sys.stderr)
    if problems:
        return 1
    text = render(docs)
    if args.output:
        args.output.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
