"""serve-model: any citelab model served over HTTP as OpenAI's chat completions and
Responses APIs and Anthropic's Messages API (``citelab serve-model``), so the real SDKs can
talk to the offline models."""

from citelab.models.serve._server import RunningServer, build_app, run_server, serve_in_thread

__all__ = ["RunningServer", "build_app", "run_server", "serve_in_thread"]
