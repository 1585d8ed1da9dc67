"""affidavit.registry: the small HTTP service (Starlette + uvicorn) and its httpx client."""

__all__: list[str] = []
