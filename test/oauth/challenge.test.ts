import assert from "node:assert/strict";
import { test } from "node:test";
import { parseAuthorizationBearer } from "../../src/oauth/bearer.ts";
import {
  type BearerChallengeOptions,
  buildBearerChallenge,
  type Challenge,
  ChallengeBuildError,
  ChallengeParseError,
  challengeError,
  challengeErrorDescription,
  challengeResourceMetadata,
  challengeScope,
  findBearerChallenge,
  parseWwwAuthenticate,
} from "../../src/oauth/challenge.ts";

const PRM = "https://rs.example/.well-known/oauth-protected-resource";

/** Parses or throws ChallengeParseError with the stable code; any other exception fails the test. */
function parseOrMalformed(header: string): Challenge[] | ChallengeParseError {
  try {
    return parseWwwAuthenticate(header);
  } catch (error) {
    assert.ok(error instanceof ChallengeParseError, `unexpected ${String(error)}`);
    assert.equal(error.code, "www_authenticate_malformed");
    return error;
  }
}

function assertMalformed(header: string, position?: number): ChallengeParseError {
  const result = parseOrMalformed(header);
  assert.ok(
    result instanceof ChallengeParseError,
    `expected ${JSON.stringify(header)} to be rejected`,
  );
  if (position !== undefined) assert.equal(result.position, position);
  return result;
}

function bearerOf(header: string): Challenge {
  const bearer = findBearerChallenge(parseWwwAuthenticate(header));
  assert.ok(bearer, "no Bearer challenge");
  return bearer;
}

// --- Parser: the four cases the MCP SDK gets wrong (oauth-anchors.md §1.5) ---

test("[RFC9110-challenge-multi] DPoP then Bearer in one header", () => {
  const challenges = parseWwwAuthenticate(`DPoP algs="ES256", Bearer resource_metadata="${PRM}"`);
  assert.deepEqual(challenges, [
    { scheme: "dpop", rawScheme: "DPoP", parameters: { algs: "ES256" } },
    { scheme: "bearer", rawScheme: "Bearer", parameters: { resource_metadata: PRM } },
  ]);
  assert.equal(challengeResourceMetadata(findBearerChallenge(challenges)!)?.href, PRM);
});

test("[RFC9110-challenge-multi] Basic then Bearer: Bearer is found and owns only its parameters", () => {
  const challenges = parseWwwAuthenticate(`Basic realm="x", Bearer error="invalid_token"`);
  assert.equal(challenges.length, 2);
  assert.deepEqual(challenges[0]!.parameters, { realm: "x" });
  assert.deepEqual(bearerOf(`Basic realm="x", Bearer error="invalid_token"`).parameters, {
    error: "invalid_token",
  });
});

test("[RFC9110-challenge-multi] a DPoP error does not leak into Bearer", () => {
  const header = `DPoP error="use_dpop_nonce", error_description="nonce", algs="ES256", Bearer realm="rs"`;
  const bearer = bearerOf(header);
  assert.equal(challengeError(bearer), undefined);
  assert.equal(challengeErrorDescription(bearer), undefined);
  assert.deepEqual(bearer.parameters, { realm: "rs" });
  assert.equal(challengeError(parseWwwAuthenticate(header)[0]!), "use_dpop_nonce");
});

test("[RFC9110-challenge-multi] several header lines joined with ', ' parse as one list", () => {
  const lines = [`Bearer realm="a", scope="s1"`, `DPoP algs="ES256 PS256"`, `Negotiate`];
  const challenges = parseWwwAuthenticate(lines.join(", "));
  assert.deepEqual(
    challenges.map((c) => c.scheme),
    ["bearer", "dpop", "negotiate"],
  );
  assert.deepEqual(challenges[0]!.parameters, { realm: "a", scope: "s1" });
});

test("[RFC9110-quoted-pair] escaped quotes in error_description do not swallow scope", () => {
  const bearer = bearerOf(
    `Bearer error_description="missing scope=\\"admin\\"", scope="tools:read"`,
  );
  assert.equal(challengeErrorDescription(bearer), `missing scope="admin"`);
  assert.equal(bearer.parameters.scope, "tools:read");
  assert.deepEqual(challengeScope(bearer), ["tools:read"]);
});

test("[RFC9110-quoted-pair] backslash escapes any character, including a backslash", () => {
  const bearer = bearerOf(`Bearer realm="a\\\\b\\c\\"d", x=""`);
  assert.equal(bearer.parameters.realm, `a\\bc"d`);
  assert.equal(bearer.parameters.x, "");
});

test("[RFC9110-bws-around-equals] spaces and tabs around '=' are allowed", () => {
  assert.deepEqual(bearerOf(`Bearer scope = "a"`).parameters, { scope: "a" });
  assert.deepEqual(bearerOf(`Bearer realm\t=\t"r" ,  scope= a`).parameters, {
    realm: "r",
    scope: "a",
  });
  assert.deepEqual(bearerOf(`  Bearer  realm =r  `).parameters, { realm: "r" });
});

test("[RFC9110-param-case-insensitive] parameter names are lower-cased", () => {
  assert.deepEqual(bearerOf(`Bearer Scope="upper"`).parameters, { scope: "upper" });
  assert.deepEqual(challengeScope(bearerOf(`Bearer SCOPE="a b"`)), ["a", "b"]);
});

// --- Parser: the rest of the grammar ---

test("[RFC9110-scheme-case-insensitive] scheme is lower-cased and the original kept", () => {
  const [challenge] = parseWwwAuthenticate(`BEARER realm="x"`);
  assert.equal(challenge!.scheme, "bearer");
  assert.equal(challenge!.rawScheme, "BEARER");
  const mixedCase = parseWwwAuthenticate(`Basic, bEaReR realm="x"`);
  assert.equal(findBearerChallenge(mixedCase), mixedCase[1]);
  assert.equal(findBearerChallenge(mixedCase)?.rawScheme, "bEaReR");
});

test("[RFC9110-token68] token68 challenges and schemes without parameters", () => {
  assert.deepEqual(parseWwwAuthenticate("Negotiate abc=="), [
    { scheme: "negotiate", rawScheme: "Negotiate", parameters: {}, token68: "abc==" },
  ]);
  assert.deepEqual(parseWwwAuthenticate("Basic"), [
    { scheme: "basic", rawScheme: "Basic", parameters: {} },
  ]);
  const mixed = parseWwwAuthenticate(`Negotiate YII/+a-b.c_d~e=, Basic, Bearer realm="x"`);
  assert.deepEqual(
    mixed.map((c) => [c.scheme, c.token68]),
    [
      ["negotiate", "YII/+a-b.c_d~e="],
      ["basic", undefined],
      ["bearer", undefined],
    ],
  );
});

test("[RFC9110-token68] a token68 challenge cannot also carry auth-params", () => {
  assertMalformed(`Negotiate abc==, realm="x"`, 17);
  assertMalformed("Negotiate abc def");
  // By the grammar `realm=` with no value is a token68, so a following parameter is an error.
  assert.equal(parseWwwAuthenticate("Bearer realm=")[0]?.token68, "realm=");
  assertMalformed(`Bearer realm=, scope="a"`);
});

test("[RFC9110-token-value] unquoted values must be tokens", () => {
  const bearer = bearerOf("Bearer error=invalid_token, scope=tools.read");
  assert.equal(challengeError(bearer), "invalid_token");
  assert.deepEqual(challengeScope(bearer), ["tools.read"]);
  // ":" is a delimiter, not a tchar (RFC 9110 §5.6.2): such a value must be quoted.
  assertMalformed("Bearer scope=tools:read", 18);
});

test("[RFC9110-param-unique] a repeated parameter (any case) rejects the header", () => {
  assertMalformed(`Bearer scope="a", scope="b"`, 18);
  assertMalformed(`Bearer scope="a", Scope="b"`);
  // The same name in two different challenges is fine.
  assert.equal(parseWwwAuthenticate(`Bearer realm="a", DPoP realm="b"`).length, 2);
});

test("[RFC9110-list-empty-elements] empty list elements are ignored", () => {
  assert.deepEqual(bearerOf(` , ,Bearer realm="x",, scope="a" ,`).parameters, {
    realm: "x",
    scope: "a",
  });
  assert.deepEqual(parseWwwAuthenticate(",,,"), []);
  assert.deepEqual(parseWwwAuthenticate(""), []);
  assert.deepEqual(parseWwwAuthenticate(" \t "), []);
  assert.equal(findBearerChallenge(parseWwwAuthenticate(",,,")), undefined);
});

test("[RFC9110-param-prototype] a parameter named __proto__ is plain data", () => {
  const bearer = bearerOf(`Bearer __proto__="x", constructor="y", toString=z`);
  assert.equal(Object.getPrototypeOf(bearer.parameters), Object.prototype);
  assert.deepEqual(Object.keys(bearer.parameters), ["__proto__", "constructor", "tostring"]);
  assert.equal(Object.getOwnPropertyDescriptor(bearer.parameters, "__proto__")?.value, "x");
  assert.equal(challengeError(bearerOf("Bearer constructor=x")), undefined);
});

// --- Parser: malformed and hostile input ---

test("[RFC9110-malformed] unterminated quotes", () => {
  assertMalformed(`Bearer realm="x`, 13);
  assertMalformed(`Bearer realm="x\\"`);
  assertMalformed(`Bearer realm="x\\`);
  assertMalformed(`"`);
});

test("[RFC9110-malformed] error message gives a position and never echoes the header", () => {
  const secret = "eyJhbGciOiJSUzI1NiJ9.secret-token-value";
  const error = assertMalformed(`Bearer error_description="${secret}`);
  assert.doesNotMatch(error.message, /secret-token-value/);
  assert.match(error.message, /character 25/);
  assert.doesNotMatch(JSON.stringify(error), /secret-token-value/);
});

test("[RFC9110-malformed] empty scheme, missing values, missing commas, stray characters", () => {
  for (const header of [
    `="x"`,
    `, ="x"`,
    `Bearer realm=, scope="a"`,
    `Bearer realm="x" scope="y"`,
    `Bearer realm="x"scope="y"`,
    `Bearer realm=="x"`,
    `Bearer realm="a"b`,
    `Bearer"x"`,
    `Bearer (comment)`,
    `Bearer realm=x=y`,
    `Bearer; realm="x"`,
    `Bearer realm="x", , , =`,
  ]) {
    assertMalformed(header);
  }
});

test("[RFC9110-malformed] headers longer than 8 KiB are refused before parsing", () => {
  const big = `Bearer realm="${"a".repeat(100 * 1024)}"`;
  assertMalformed(big, 8192);
  assertMalformed(`Bearer ${"x=y, ".repeat(25_000)}`);
  const justUnder = `Bearer realm="${"a".repeat(8192 - 15)}"`;
  assert.equal(justUnder.length, 8192);
  assert.equal(bearerOf(justUnder).parameters.realm?.length, 8192 - 15);
});

test("[RFC9110-malformed] CR, LF and NUL are rejected, quoted or not", () => {
  assertMalformed(`Bearer realm="x"\r\nSet-Cookie: a=b`);
  assertMalformed(`Bearer realm="x\r\ny"`, 15);
  assertMalformed(`Bearer realm="x\ny"`);
  assertMalformed(`Bearer realm="x\0"`);
  assertMalformed(`Bearer realm="x",\r\n scope="y"`);
  assertMalformed(`Bearer realm="\\\n"`);
});

test("[RFC9110-malformed] unicode: allowed inside quoted-strings as obs-text, never in tokens", () => {
  assert.equal(
    bearerOf(`Bearer error_description="café ☕ 😀"`).parameters.error_description,
    "café ☕ 😀",
  );
  assertMalformed(`Bearér realm="x"`);
  assertMalformed(`Bearer réalm="x"`);
  assertMalformed(`Bearer realm=café`);
});

test("[RFC9110-malformed] nested quotes", () => {
  assertMalformed(`Bearer realm=""x""`);
  assertMalformed(`Bearer realm="a"b"c"`);
  assert.equal(bearerOf(`Bearer realm="a\\"b\\"c"`).parameters.realm, `a"b"c`);
  assert.equal(
    bearerOf(`Bearer realm="'nested' \\"quotes\\""`).parameters.realm,
    `'nested' "quotes"`,
  );
});

test("[RFC9110-malformed] random input only ever parses or throws ChallengeParseError", () => {
  // mulberry32: deterministic, so a failure reproduces.
  let seed = 0x5eed;
  const random = (): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const alphabet = [
    "Bearer",
    "DPoP",
    "realm",
    "a",
    "=",
    "==",
    ",",
    '"',
    "\\",
    " ",
    "\t",
    "\r\n",
    "\0",
    "é",
    "😀",
    "/",
    "+",
    ";",
  ];
  const base = `DPoP algs="ES256", Bearer error_description="missing scope=\\"admin\\"", scope="tools:read"`;
  let parsed = 0;
  for (let i = 0; i < 3000; i++) {
    let header = "";
    if (i % 2 === 0) {
      const length = Math.floor(random() * 24);
      for (let j = 0; j < length; j++) header += alphabet[Math.floor(random() * alphabet.length)];
    } else {
      const at = Math.floor(random() * base.length);
      header =
        base.slice(0, at) + alphabet[Math.floor(random() * alphabet.length)] + base.slice(at + 1);
    }
    if (Array.isArray(parseOrMalformed(header))) parsed++;
  }
  assert.ok(parsed > 100, "the generator should produce some valid headers too");
});

// --- Getters ---

test("[RFC6750-S3-scope] scope splits on spaces; empty scope is an empty list", () => {
  assert.deepEqual(challengeScope(bearerOf(`Bearer scope="  a  b:c   d "`)), ["a", "b:c", "d"]);
  assert.deepEqual(challengeScope(bearerOf(`Bearer scope=""`)), []);
  assert.equal(challengeScope(bearerOf(`Bearer realm="x"`)), undefined);
});

test("[RFC9728-S5.1-resource-metadata] resource_metadata is returned only as an absolute http(s) URL", () => {
  assert.ok(
    challengeResourceMetadata(bearerOf(`Bearer resource_metadata="${PRM}"`)) instanceof URL,
  );
  assert.equal(
    challengeResourceMetadata(bearerOf(`Bearer resource_metadata="http://127.0.0.1:8080/prm"`))
      ?.port,
    "8080",
  );
  for (const bad of ["/relative", "not a url", "javascript:alert(1)", "file:///etc/passwd", ""]) {
    assert.equal(
      challengeResourceMetadata(bearerOf(`Bearer resource_metadata="${bad}"`)),
      undefined,
      bad,
    );
  }
  assert.equal(challengeResourceMetadata(bearerOf("Bearer")), undefined);
});

// --- Builder ---

test("[RFC6750-S3.1-no-error-when-missing] missing credentials: 401, no error code", () => {
  const built = buildBearerChallenge({ realm: "mcp", resourceMetadata: PRM });
  assert.deepEqual(built, {
    status: 401,
    header: `Bearer realm="mcp", resource_metadata="${PRM}"`,
  });
  assert.deepEqual(buildBearerChallenge(), { status: 401, header: "Bearer" });
  assert.deepEqual(buildBearerChallenge({ scope: [] }), { status: 401, header: "Bearer" });
});

test("[RFC6750-S3.1-no-error-when-missing] an error_description without an error code is refused", () => {
  assert.throws(
    () => buildBearerChallenge({ errorDescription: "no token" }),
    (error) =>
      error instanceof ChallengeBuildError && error.code === "www_authenticate_invalid_value",
  );
});

test("[RFC6750-S3-status-mapping] invalid_request 400, invalid_token 401, insufficient_scope 403", () => {
  assert.equal(buildBearerChallenge({ error: "invalid_request" }).status, 400);
  assert.equal(buildBearerChallenge({ error: "invalid_token" }).status, 401);
  assert.equal(buildBearerChallenge({ error: "insufficient_scope", scope: ["a"] }).status, 403);
  assert.equal(buildBearerChallenge({}).status, 401);
  assert.throws(
    () => buildBearerChallenge({ error: "invalid_client" as "invalid_token" }),
    ChallengeBuildError,
  );
});

test("[RFC6750-S3-insufficient-scope] 403 carries the required scope", () => {
  const built = buildBearerChallenge({
    realm: "mcp",
    error: "insufficient_scope",
    errorDescription: "needs tools:write",
    scope: ["tools:read", "tools:write"],
    resourceMetadata: PRM,
  });
  assert.equal(built.status, 403);
  assert.equal(
    built.header,
    `Bearer realm="mcp", error="insufficient_scope", error_description="needs tools:write", ` +
      `scope="tools:read tools:write", resource_metadata="${PRM}"`,
  );
});

test("[RFC6750-S3-error-description-charset] error_description is sanitised to %x20-21 / %x23-5B / %x5D-7E", () => {
  const { header } = buildBearerChallenge({
    error: "invalid_token",
    errorDescription: `bad "aud" in C:\\tokens\r\nSet-Cookie: x\0 café 😀`,
  });
  assert.equal(
    header,
    `Bearer error="invalid_token", error_description="bad 'aud' in C:/tokens  Set-Cookie: x? caf? ?"`,
  );
  assert.doesNotMatch(header, /[\r\n\0]/);
});

test("[RFC6750-S3-header-injection] control characters in configuration values throw", () => {
  const cases: BearerChallengeOptions[] = [
    { realm: "a\r\nSet-Cookie: x=y" },
    { realm: "a\0" },
    { realm: "caf\u00e9" },
    { resourceMetadata: `${PRM}\r\nX: y` },
    { resourceMetadata: "/relative" },
    { scope: ["a\nb"] },
    { scope: ["a b"] },
    { scope: ['a"b'] },
    { scope: ["a\\b"] },
    { scope: [""] },
  ];
  for (const options of cases) {
    assert.throws(
      () => buildBearerChallenge(options),
      ChallengeBuildError,
      JSON.stringify(options),
    );
  }
  const error = (() => {
    try {
      buildBearerChallenge({ realm: "secret-realm\n" });
    } catch (caught) {
      return caught as ChallengeBuildError;
    }
  })();
  assert.doesNotMatch(error!.message, /secret-realm/);
});

test("[RFC6750-S3-escape] quotes and backslashes in the realm are escaped and round-trip", () => {
  const realm = `say "hi" \\ bye \\"`;
  const { header } = buildBearerChallenge({ realm });
  assert.equal(header, `Bearer realm="say \\"hi\\" \\\\ bye \\\\\\""`);
  assert.equal(bearerOf(header).parameters.realm, realm);
});

test("[RFC6750-S3-round-trip] every built challenge parses back to its options", () => {
  const cases: BearerChallengeOptions[] = [
    {},
    { realm: "r" },
    { resourceMetadata: PRM },
    { realm: `q"uo\\te`, resourceMetadata: `${PRM}?a="b"` },
    { error: "invalid_request", errorDescription: `missing scope="admin" \\ path` },
    { error: "invalid_token", errorDescription: "expired", realm: "a, b=c" },
    { error: "insufficient_scope", scope: ["tools:read", "x!#$%&'()*+,-./"], realm: "\t" },
  ];
  for (const options of cases) {
    const bearer = bearerOf(buildBearerChallenge(options).header);
    assert.equal(bearer.parameters.realm, options.realm);
    assert.equal(bearer.parameters.resource_metadata, options.resourceMetadata);
    assert.equal(challengeError(bearer), options.error);
    assert.deepEqual(challengeScope(bearer), options.scope);
    const sanitised = options.errorDescription?.replaceAll('"', "'").replaceAll("\\", "/");
    assert.equal(challengeErrorDescription(bearer), sanitised);
  }
  // Next to other challenges, as a server would send them.
  const { header } = buildBearerChallenge({ error: "invalid_token", errorDescription: `"x"` });
  const bearer = bearerOf(`DPoP algs="ES256", ${header}, Basic realm="b"`);
  assert.deepEqual(bearer.parameters, { error: "invalid_token", error_description: "'x'" });
});

// --- Authorization: Bearer ---

test("[RFC6750-S2.1-authorization-bearer] one b64token after a case-insensitive scheme", () => {
  const jwt = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1In0.sig-_~+/==";
  assert.deepEqual(parseAuthorizationBearer(`Bearer ${jwt}`), { kind: "token", token: jwt });
  assert.deepEqual(parseAuthorizationBearer("bearer abc"), { kind: "token", token: "abc" });
  assert.deepEqual(parseAuthorizationBearer("BEARER   abc=  "), { kind: "token", token: "abc=" });
  assert.deepEqual(parseAuthorizationBearer(" \tBearer abc"), { kind: "token", token: "abc" });
});

test("[RFC6750-S3.1-no-error-when-missing] no header, an empty one, or another scheme is missing", () => {
  for (const header of [
    null,
    undefined,
    "",
    "  ",
    "Basic dXNlcjpwYXNz",
    "DPoP abc",
    "BearerX abc",
    "Bearer-ish a",
  ]) {
    assert.deepEqual(parseAuthorizationBearer(header), { kind: "missing" }, String(header));
  }
});

test("[RFC6750-S2.1-malformed-is-invalid-request] anything else after Bearer is malformed", () => {
  for (const header of [
    "Bearer",
    "Bearer ",
    "Bearer\tabc",
    "Bearer a b",
    "Bearer a,b",
    "Bearer abc, Bearer def",
    'Bearer "abc"',
    "Bearer a=b",
    "Bearer =abc",
    "Bearer ab€",
    "Bearer abc\r\n",
    "Bearer=abc",
    `Bearer ${"a ".repeat(10_000)}b`,
  ]) {
    assert.deepEqual(
      parseAuthorizationBearer(header),
      { kind: "malformed" },
      JSON.stringify(header),
    );
  }
});
