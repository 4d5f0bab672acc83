
// Serializers of the structs that cross actor boundaries, generated from their
// fields.
{codecs}
