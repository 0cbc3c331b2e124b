"""A local stand-in of the Gemini API (`GOOGLE_GEMINI_BASE_URL`), for the real Gemini CLI offline."""
