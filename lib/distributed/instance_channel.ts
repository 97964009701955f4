/**
 * The connection between the launcher of `poptfjs run` and its instance
 * runners, apart from `mpiexec`: the launcher listens on a TCP port (on the
 * loopback interface when every instance runs on this host), and each
 * runner connects, says which instance it is with the run's token, and sends
 * its command's output lines and then how the command ended, one JSON
 * message a line.
 *
 * `mpiexec` forwards the output of its processes in chunks of whatever size
 * it reads, so two instances printing long lines at once come out with their
 * bytes mixed; over a connection of its own, each instance's lines reach the
 * launcher whole and in order, and the launcher prints each with one write.
 * The connection is also each runner's lifeline: a runner whose launcher is
 * gone (killed, its terminal closed) ends its command instead of leaving it
 * running with nothing left to stop it.
 */
import { randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { PoptfjsError } from '../common/errors.js';
import type { InstanceExit } from './instance_exit.js';

/** Where runners reach the launcher, and the token that shows they belong to the run. */
export interface ChannelAddress {
  readonly host: string;
  readonly port: number;
  readonly token: string;
}

/** The stream of an instance a line was printed on. */
export type OutputStream = 'stdout' | 'stderr';

/** What a runner sends: first who it is, then lines, then how its command ended. */
type ChannelMessage = { readonly hello: string; readonly instance: number } | { readonly line: string; readonly stream: OutputStream } | { readonly exit: InstanceExit };

/** What the launcher hears from the runners. */
export interface ChannelListener {
  /**
   * Instance `instance` printed `line` (without its newline) on `stream`;
   * while the promise returned (when one is) is pending, the runner's
   * connection is not read (the launcher's output cannot take more).
   */
  line(instance: number, stream: OutputStream, line: string): Promise<void> | undefined;
  /** An instance's command ended. */
  exit(exit: InstanceExit): void;
}

/** The launcher's end: accepts one connection per runner and passes on what each sends. */
export class LauncherChannel {
  private readonly sockets = new Set<Socket>();
  private readonly token = randomBytes(16).toString('hex');
  private drained: Promise<void> | undefined;

  private constructor(
    private readonly server: Server,
    private readonly advertisedHost: string,
  ) {}

  /**
   * Listens on `listenHost` (`127.0.0.1` for a run on this host, `0.0.0.0`
   * for one over several hosts, which reach it as `advertisedHost`).
   */
  static open(listenHost: string, advertisedHost: string, listener: ChannelListener): Promise<LauncherChannel> {
    return new Promise((resolve, reject) => {
      let channel: LauncherChannel | undefined;
      const server = createServer((socket) => channel?.accept(socket, listener));
      server.once('error', (error) => reject(new PoptfjsError(`run: cannot listen for the instances on ${listenHost}: ${error.message}`, { type: 'cli', cause: error })));
      server.listen(0, listenHost, () => {
        channel = new LauncherChannel(server, advertisedHost);
        resolve(channel);
      });
    });
  }

  /** Where the runners connect. */
  get address(): ChannelAddress {
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new PoptfjsError('run: the channel for the instances has no TCP address', { type: 'cli' });
    return { host: this.advertisedHost, port: address.port, token: this.token };
  }

  private accept(socket: Socket, listener: ChannelListener): void {
    this.sockets.add(socket);
    let instance: number | undefined;
    socket.once('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const lines = createInterface({ input: socket, crlfDelay: Infinity });
    lines.on('line', (text) => {
      let message: ChannelMessage;
      try {
        message = JSON.parse(text) as ChannelMessage;
      } catch {
        socket.destroy();
        return;
      }
      if (instance === undefined) {
        // The first message shows the connection is a runner of this run; anything else is dropped.
        if (!('hello' in message) || message.hello !== this.token || !Number.isInteger(message.instance)) socket.destroy();
        else instance = message.instance;
        return;
      }
      if ('line' in message) {
        const paused = listener.line(instance, message.stream === 'stderr' ? 'stderr' : 'stdout', String(message.line));
        if (paused) {
          socket.pause();
          void paused.then(() => socket.resume());
        }
      } else if ('exit' in message) listener.exit({ ...message.exit, instance });
    });
  }

  /**
   * Resolves once every runner that connected has closed its connection (each
   * does after reporting how its command ended), or after `timeoutMs`, when
   * the connections left are closed.
   */
  drain(timeoutMs: number): Promise<void> {
    this.drained ??= new Promise<void>((done) => {
      const timer = setTimeout(() => {
        for (const socket of this.sockets) socket.destroy();
        done();
      }, timeoutMs);
      const check = () => {
        if (this.sockets.size > 0) return;
        clearTimeout(timer);
        done();
      };
      for (const socket of this.sockets) socket.once('close', check);
      check();
    });
    return this.drained;
  }

  /** Stops listening and closes every connection. */
  close(): void {
    for (const socket of this.sockets) socket.destroy();
    this.server.close();
  }
}

/** A runner's end: sends the launcher its instance's lines and exit. */
export class RunnerChannel {
  private closedByRunner = false;

  private constructor(private readonly socket: Socket) {}

  /**
   * Connects to the launcher at `address` as instance `instance`; `lost` is
   * called if the launcher goes away before the runner is done.
   */
  static connect(address: ChannelAddress, instance: number, lost: () => void): Promise<RunnerChannel> {
    return new Promise((resolve, reject) => {
      const socket = connect(address.port, address.host);
      socket.once('error', (error) =>
        reject(new PoptfjsError(`instance runner: cannot reach the launcher at ${address.host}:${address.port}: ${error.message}`, { type: 'distributed', cause: error })),
      );
      socket.once('connect', () => {
        const channel = new RunnerChannel(socket);
        socket.removeAllListeners('error');
        socket.on('error', () => socket.destroy());
        socket.once('close', () => {
          if (!channel.closedByRunner) lost();
        });
        // The launcher sends nothing; reading keeps the socket's end (the launcher gone) noticed.
        socket.resume();
        channel.send({ hello: address.token, instance });
        resolve(channel);
      });
    });
  }

  /** Sends a message; a promise when the connection holds more than it should, which resolves when it has sent it. */
  private send(message: ChannelMessage): Promise<void> | undefined {
    if (this.socket.destroyed) return undefined;
    if (this.socket.write(`${JSON.stringify(message)}\n`)) return undefined;
    return new Promise((done) => {
      this.socket.once('drain', done);
      this.socket.once('close', done);
    });
  }

  /** Sends a line the command printed; the promise, when there is one, resolves when more may be sent. */
  line(stream: OutputStream, line: string): Promise<void> | undefined {
    return this.send({ line, stream });
  }

  /** Sends how the command ended and closes the connection once everything is sent. */
  finish(exit: InstanceExit): Promise<void> {
    this.closedByRunner = true;
    return new Promise((done) => {
      if (this.socket.destroyed) {
        done();
        return;
      }
      this.socket.once('close', () => done());
      this.socket.end(`${JSON.stringify({ exit } satisfies ChannelMessage)}\n`);
    });
  }
}
