// The command line every client peer under tests/peers/clients takes:
//   --url URL  [--transport http|sse]  [--name NAME]  [--version V]
//   --transport stdio [--name NAME] [--version V] -- CMD ARGS...
export function parseArgs(argv, defaultName) {
  const args = { url: undefined, transport: "http", name: defaultName, version: "1.0.0", command: [] };
  const end = argv.indexOf("--");
  if (end >= 0) {
    args.command = argv.slice(end + 1);
    argv = argv.slice(0, end);
  }
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) usage(`${flag} needs a value`);
    const key = flag.replace(/^--/, "");
    if (!(key in args) || key === "command") usage(`unknown flag ${flag}`);
    args[key] = value;
  }
  if (!["http", "sse", "stdio"].includes(args.transport)) usage("--transport is http, sse or stdio");
  if (args.transport === "stdio" ? args.command.length === 0 : !args.url) {
    usage("--url for http and sse; -- CMD ARGS... for stdio");
  }
  return args;
}

// What every client peer prints: one JSON object on stdout.
export function printSaw(args, result) {
  const names = result.tools.map((tool) => tool.name);
  console.log(
    JSON.stringify({
      client: args.name,
      count: names.length,
      names,
      next_cursor: result.nextCursor !== undefined,
    }),
  );
}

function usage(message) {
  console.error(
    `${message}\nusage: --url URL [--transport http|sse] [--name NAME] [--version V]\n` +
      `       --transport stdio [--name NAME] [--version V] -- CMD ARGS...`,
  );
  process.exit(2);
}
