// Preload (`node --require loopback.cjs gateway.js ...`) for gateways that have no
// host flag and listen on every interface (supergateway): every TCP listen is forced
// onto 127.0.0.1, and the first one announces its real port on stderr as
// "listening on http://127.0.0.1:PORT" (pass --port 0 for any free port).
"use strict";
const net = require("net");

const listen = net.Server.prototype.listen;
let announced = false;

net.Server.prototype.listen = function (...args) {
  if (args.length > 0 && typeof args[0] === "object" && args[0] !== null && !Array.isArray(args[0])) {
    // listen({port, host, ...}[, cb]); a path (Unix socket) is left alone.
    if (args[0].path === undefined) args[0] = { ...args[0], host: "127.0.0.1" };
  } else if (args.length > 0 && (typeof args[0] === "number" || /^\d+$/.test(String(args[0])))) {
    // listen(port[, host][, backlog][, cb])
    if (typeof args[1] === "string") args[1] = "127.0.0.1";
    else args.splice(1, 0, "127.0.0.1");
  } else if (args.length === 0 || typeof args[0] === "function") {
    // listen([cb]): any port
    args.unshift(0, "127.0.0.1");
  }
  this.once("listening", () => {
    const address = this.address();
    if (!announced && address && typeof address === "object") {
      announced = true;
      process.stderr.write(`listening on http://127.0.0.1:${address.port}\n`);
    }
  });
  return listen.apply(this, args);
};
