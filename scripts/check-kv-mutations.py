#!/usr/bin/env python3
# check-kv-mutations.py: applies each of six plausible bugs to the KV policies (issue 13), one at a
# time, rebuilds the KV tests and prints which tests fail under it (SURVIVED = none: a gap in
# the tests). Restores every file afterwards. Run from the repository root after a build:
#   scripts/check-kv-mutations.py
import subprocess
muts = {
 'M1 confkv EMA -> plain sum': ('engine/kv/kv-policy-confkv.cpp', 'h.score[i] = decay_ * h.score[i] + w * h.mass[i];', 'h.score[i] = h.score[i] + w * h.mass[i];'),
 'M2 confkv group division dropped': ('engine/kv/kv-policy-confkv.cpp', 'const float w = (1.f - decay_) / float(meta.group);', 'const float w = (1.f - decay_);'),
 'M3 freekv page score first head only': ('engine/kv/kv-policy-freekv.cpp', '      for (int64_t h = 0; h < G; ++h) {\n        float* b', '      for (int64_t h = 0; h < 1; ++h) {\n        float* b'),
 'M4 freekv softmax removed': ('engine/kv/kv-policy-freekv.cpp', '        softmax(b, n);\n', '\n'),
 'M5 freekv cosine first head only': ('engine/kv/kv-policy-freekv.cpp', 'for (int64_t h = g * group(); h < (g + 1) * group(); ++h) {', 'for (int64_t h = g * group(); h < g * group() + 1; ++h) {'),
 'M6 h2o 10% and no heavy hitters': ('engine/kv/kv-policy-h2o.cpp', 'return heavy_ > 0 ? heavy_ + recent_ : 2 * tenth(seq_len);', 'return heavy_ > 0 ? heavy_ + recent_ : tenth(seq_len);'),
}
tests = ['test-kv-mutations', 'test-kv-policies', 'test-kv-runtime', 'test-kv-memory']
for name, (f, a, b) in muts.items():
    src = open(f).read()
    assert a in src, name
    open(f, 'w').write(src.replace(a, b, 1))
    if name.startswith('M5'):
        s2 = open(f).read().replace('return float(std::clamp(sum / double(group()), -1.0, 1.0));', 'return float(std::clamp(sum, -1.0, 1.0));')
        open(f, 'w').write(s2)
    try:
        r = subprocess.run(['cmake', '--build', 'build', '-j2', '--target'] + tests, capture_output=True, text=True)
        if r.returncode: print(name, 'BUILD FAILED', r.stdout[-500:]); continue
        failed = []
        for t in tests:
            o = subprocess.run(['build/tests/' + t, '--gtest_brief=1'], capture_output=True, text=True).stdout
            failed += [l.split()[-1] if '(' not in l else l.split()[3] for l in o.splitlines() if l.startswith('[  FAILED  ]') and 'listed below' not in l and 'FAILED TEST' not in l]
        print(name, '->', sorted(set(failed)) or 'SURVIVED')
    finally:
        open(f, 'w').write(src)
subprocess.run(['cmake', '--build', 'build', '-j2', '--target'] + tests, capture_output=True)
