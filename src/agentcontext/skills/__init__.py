"""Agent Skills: folders, frontmatter, validation modes, shadowing, and a skill described as JSON."""
