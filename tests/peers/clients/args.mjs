// The command line every client peer under tests/peers/clients takes:
//   --url URL  [--transport http|sse]  [--name NAME]  [--version V]
export function parseArgs(argv, defaultName) {
  const args = { url: undefined, transport: "http", name: defaultName, version: "1.0.0" };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) usage(`${flag} needs a value`);
    const key = flag.replace(/^--/, "");
    if (!(key in args)) usage(`unknown flag ${flag}`);
    args[key] = value;
  }
  if (!args.url) usage("--url is required");
  if (args.transport !== "http" && args.transport !== "sse") usage("--transport is http or sse");
  return args;
}

function usage(message) {
  console.error(`${message}\nusage: --url URL [--transport http|sse] [--name NAME] [--version V]`);
  process.exit(2);
}
