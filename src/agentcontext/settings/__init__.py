"""Every setting, declared once; the profiles' defaults; the layered config; the generated reference."""
