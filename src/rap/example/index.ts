/** Reference RAP components: the example tool and the protected API it calls. */
export {
  EXAMPLE_API_RESOURCE,
  type ExampleToolOptions,
  type RunningExampleTool,
  startExampleTool,
} from "./example-tool.ts";
export { type ProtectedApi, startProtectedApi } from "./protected-api.ts";
