import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { hasExpired, onExpiry } from '../src/auth/expiry.js';
import type { Viewer } from '../src/auth/viewer.js';
import { mcpErrorResponse } from '../src/errors.js';
import { callerKey } from '../src/rate-limit.js';
import type { Services } from '../src/services.js';

/** At most one `notifications/tools/list_changed` per stream in this many milliseconds. */
export const LIST_CHANGED_INTERVAL_MS = 250;

/**
 * Calls `notify` for a burst of changes at most once per `intervalMs`: at once for the first change, then
 * once at the end of the interval when more came meanwhile.
 */
function coalescing(intervalMs: number, notify: () => void) {
  let timer: NodeJS.Timeout | undefined;
  let pending = false;
  const open = () => {
    timer = setTimeout(() => {
      timer = undefined;
      if (!pending) return;
      pending = false;
      notify();
      open();
    }, intervalMs);
    timer.unref();
  };
  return {
    changed() {
      if (timer) {
        pending = true;
        return;
      }
      notify();
      open();
    },
    stop: () => clearTimeout(timer),
  };
}

/**
 * `GET /mcp`: the transport's standalone SSE stream (stateless: no session, the SDK's keep-alive comments),
 * carrying `notifications/tools/list_changed` whenever a CONNECTOR_CHANGED event of the caller's tenant
 * arrives on the bus (from any instance), and after the bus lost events for a while (Redis re-subscribed),
 * since a change may have been among them. It holds one of the caller's stream slots (the ones graphql-ws
 * sockets and SSE subscriptions take; 429 with Retry-After when none is free) and ends when the client goes
 * away or the caller's token expires, giving back its slot and its bus listener either way. The caller is
 * verified and allowed before this is called.
 */
export async function openToolListStream(
  services: Services,
  viewer: Viewer,
  request: Request,
  mcp: Server,
): Promise<Response> {
  if (!request.headers.get('accept')?.includes('text/event-stream')) {
    return mcpErrorResponse(406, 'Not Acceptable: Client must accept text/event-stream');
  }
  const { streams } = services;
  const release = streams.take(callerKey(viewer));
  if (!release) {
    return mcpErrorResponse(
      429,
      `Too many open streams: at most ${streams.maxPerCaller} WebSockets, server-sent event subscriptions and MCP streams per caller`,
      { 'Retry-After': String(services.config.retryAfterSeconds) },
    );
  }
  let ended = false;
  const cleanups: (() => void)[] = [release];
  const end = () => {
    if (ended) return;
    ended = true;
    for (const cleanup of cleanups) cleanup();
    // Closes the transport, which closes its stream: the client sees the end.
    mcp.close().catch(() => undefined);
  };
  try {
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await mcp.connect(transport);
    const response = await transport.handleRequest(request);
    if (response.status !== 200 || !response.body) {
      end();
      return response;
    }
    const notifications = coalescing(LIST_CHANGED_INTERVAL_MS, () => {
      if (hasExpired(viewer)) end();
      else mcp.sendToolListChanged().catch(end);
    });
    cleanups.push(
      notifications.stop,
      services.bus.listen(
        ['CONNECTOR_CHANGED'],
        viewer.tenantId,
        notifications.changed,
        notifications.changed,
      ),
      onExpiry(viewer, end),
    );
    request.signal?.addEventListener('abort', end, { once: true });
    const source = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        // A comment at once, so the status and headers leave now rather than with the first notification.
        controller.enqueue(new TextEncoder().encode(': open\n\n'));
      },
      async pull(controller) {
        const read = await source.read().catch(() => ({ done: true as const, value: undefined }));
        if (read.done) {
          end();
          controller.close();
        } else controller.enqueue(read.value);
      },
      async cancel(reason) {
        end();
        await source.cancel(reason).catch(() => undefined);
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  } catch (error) {
    end();
    throw error;
  }
}
