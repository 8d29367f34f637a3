/**
 * The official AHP version negotiation (`types/version/registry.ts` @0383429 `negotiateProtocolVersion`), pure:
 * caret ranges of each baseline, 0.x minor pinning, 0.0.x patch pinning, highest offered wins regardless of order,
 * malformed versions are an explicit error.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  compareProtocolVersions,
  negotiateProtocolVersion,
  OFFICIAL_SUPPORTED_PROTOCOL_VERSIONS,
  parseProtocolVersion,
} from "../../src/ahp/version.ts";

const BASES = OFFICIAL_SUPPORTED_PROTOCOL_VERSIONS;

describe("AHP version negotiation (pure)", () => {
  it("[AHP-version-baselines] the official baselines are 1.0.0 and 0.9.0, most preferred first", () => {
    assert.deepEqual([...BASES], ["1.0.0", "0.9.0"]);
  });

  it("[AHP-version-caret-1x] any 1.y.z at or above 1.0.0 is accepted; 2.0.0 is not", () => {
    assert.deepEqual(negotiateProtocolVersion(["1.0.0"], BASES), { ok: true, version: "1.0.0" });
    assert.deepEqual(negotiateProtocolVersion(["1.1.0"], BASES), { ok: true, version: "1.1.0" });
    assert.deepEqual(negotiateProtocolVersion(["1.99.7"], BASES), {
      ok: true,
      version: "1.99.7",
    });
    assert.deepEqual(negotiateProtocolVersion(["2.0.0"], BASES), { ok: false, reason: "none" });
  });

  it("[AHP-version-0x-minor-pinning] ^0.9.0 is >=0.9.0 <0.10.0: 0.9.x yes, 0.10.0 and 0.8.9 no", () => {
    assert.deepEqual(negotiateProtocolVersion(["0.9.0"], BASES), { ok: true, version: "0.9.0" });
    assert.deepEqual(negotiateProtocolVersion(["0.9.7"], BASES), { ok: true, version: "0.9.7" });
    assert.deepEqual(negotiateProtocolVersion(["0.10.0"], BASES), { ok: false, reason: "none" });
    assert.deepEqual(negotiateProtocolVersion(["0.8.9"], BASES), { ok: false, reason: "none" });
    // The June 2026 official client build offers 0.5.0 (and older): outside both baselines.
    assert.deepEqual(negotiateProtocolVersion(["0.5.0", "0.4.0", "0.3.0"], BASES), {
      ok: false,
      reason: "none",
    });
  });

  it("[AHP-version-0-0-patch-pinning] a 0.0.z baseline accepts only that exact patch (^0.0.3 = 0.0.3)", () => {
    assert.deepEqual(negotiateProtocolVersion(["0.0.3"], ["0.0.3"]), {
      ok: true,
      version: "0.0.3",
    });
    assert.deepEqual(negotiateProtocolVersion(["0.0.4"], ["0.0.3"]), {
      ok: false,
      reason: "none",
    });
  });

  it("[AHP-version-highest-wins] the highest compatible offer wins whatever the order; patch order is numeric", () => {
    assert.deepEqual(negotiateProtocolVersion(["0.9.0", "1.0.0", "1.0.10", "1.0.9"], BASES), {
      ok: true,
      version: "1.0.10",
    });
    assert.deepEqual(negotiateProtocolVersion(["0.9.2", "0.9.10", "2.0.0"], BASES), {
      ok: true,
      version: "0.9.10",
    });
    assert.deepEqual(negotiateProtocolVersion(["1.0.0", "0.9.3"], ["0.9.0"]), {
      ok: true,
      version: "0.9.3",
    });
  });

  it("[AHP-version-configurable] a host offering only 0.9.0 refuses 1.x clients", () => {
    assert.deepEqual(negotiateProtocolVersion(["1.1.0", "1.0.0"], ["0.9.0"]), {
      ok: false,
      reason: "none",
    });
  });

  it("[AHP-version-malformed] malformed offers are an explicit error naming the entry, even when a valid one follows", () => {
    for (const bad of [
      "1",
      "1.0",
      "v1.0.0",
      "1.0.0.0",
      "",
      "01.0.0",
      "1.00.0",
      "1.0.0-beta.1",
      "1.0.0+build",
      " 1.0.0",
      "1.0.0\n",
      "-1.0.0",
      "1.0.x",
      `${"9".repeat(400)}.0.0`,
    ]) {
      const out = negotiateProtocolVersion([bad, "1.0.0"], BASES);
      assert.deepEqual(out, { ok: false, reason: "malformed", index: 0 }, JSON.stringify(bad));
    }
    // Non-strings (5, null, objects) are malformed too: a pure function must not trust its input.
    for (const bad of [5, null, undefined, {}, ["1.0.0"], true]) {
      const out = negotiateProtocolVersion(["1.0.0", bad as unknown as string], BASES);
      assert.deepEqual(out, { ok: false, reason: "malformed", index: 1 });
    }
  });

  it("[AHP-version-malformed] components beyond 2^53 are refused rather than rounded", () => {
    assert.equal(parseProtocolVersion("9007199254740993.0.0"), undefined);
    assert.deepEqual(parseProtocolVersion("10.20.30"), [10, 20, 30]);
  });

  it("[AHP-version-compare] compares numerically, component by component", () => {
    assert.ok(compareProtocolVersions("1.0.10", "1.0.9") > 0);
    assert.ok(compareProtocolVersions("0.10.0", "0.9.99") > 0);
    assert.equal(compareProtocolVersions("1.2.3", "1.2.3"), 0);
    assert.throws(() => compareProtocolVersions("1.2", "1.2.3"), /not a MAJOR\.MINOR\.PATCH/);
  });

  it("[AHP-version-empty-offer] an empty offer negotiates nothing", () => {
    assert.deepEqual(negotiateProtocolVersion([], BASES), { ok: false, reason: "none" });
  });
});
