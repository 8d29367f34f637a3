/** The demo: every part of agentauth on loopback behind the console, and the unattended script. See docs/console.md. */
export {
  type DataFolder,
  DEMO_MARKER_FILE,
  DemoFolderError,
  defaultDemoDir,
  prepareDataFolder,
} from "./data-folder.ts";
export { DEMO_LOCK_FILE, DemoRunningError } from "./lock.ts";
export {
  createRapPanel,
  DEMO_OPERATIONS,
  DEMO_USERS_LIST,
  DemoPanelInputError,
  parseInvokeInput,
  type RapPanel,
  type RapPanelOptions,
} from "./panels/rap.ts";
export { DemoPortError, type DemoPorts, PORTS_FILE } from "./ports.ts";
export {
  type DemoProgress,
  type DemoStep,
  progressText,
  readyLine,
  summaryText,
} from "./progress.ts";
export {
  DEFAULT_AHP_TOKEN_TTL_SECONDS,
  type DemoOptions,
  type DemoUrls,
  demoCommands,
  type RunningDemo,
  startDemo,
} from "./start.ts";
